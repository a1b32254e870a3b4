// The upload's file stream reads into a ring of buffers used in turn (engine.ts `fileStream`): a buffer is
// filled again FILE_STREAM_RING chunks later, which is safe only if fetch has written a chunk before it reads
// that many more. A file of many more chunks than the ring, each unlike the others, goes through the API
// client's real upload (E7, fetch) to a server that reads slowly (so the socket fills and fetch must wait for
// it to drain) and hashes what arrives: every byte must arrive as it was in the file.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../../shared/api/client.js';
import { FILE_STREAM_CHUNK, FILE_STREAM_RING, fileStream } from '../../../electron/core/jobs/engine.js';
import { tempDir } from '../../helpers/service.js';

const CHUNK = FILE_STREAM_CHUNK;

let server: Server | undefined;
const dirs: { remove(): void }[] = [];
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  for (const dir of dirs.splice(0)) dir.remove();
});

/** A server that takes E7's body a little at a time, and answers the body's size and SHA-256. */
async function slowHashingServer(): Promise<{
  url: string;
  received: Promise<{ size: number; sha: string }>;
}> {
  let done!: (value: { size: number; sha: string }) => void;
  const received = new Promise<{ size: number; sha: string }>((resolve) => (done = resolve));
  server = createServer((request, response) => {
    const hash = createHash('sha256');
    let size = 0;
    let chunks = 0;
    request.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
      // Now and then stop reading for a moment: the client's socket fills and its writes must wait.
      if (++chunks % 64 === 0) {
        request.pause();
        setTimeout(() => request.resume(), 5);
      }
    });
    request.on('end', () => {
      done({ size, sha: hash.digest('hex') });
      response.writeHead(202, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ list_id: 1, size_bytes: size }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, received };
}

describe('the upload of a file', () => {
  it('sends every byte of a file of many more chunks than its ring holds', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const path = join(dir.path, 'list.csv');
    // Chunks unlike one another (random bytes), and a last one cut short.
    const bytes = randomBytes(CHUNK * (FILE_STREAM_RING * 2 + 8) + 12_345);
    writeFileSync(path, bytes);
    const { url, received } = await slowHashingServer();
    const client = createClient({ baseUrl: url, apiKey: 'k', retries: 0 });
    const sent = await client.submitList(
      { name: 'list.csv', body: () => fileStream(path), size: bytes.length },
      {},
      { mode: 'text' },
    );
    expect(sent.ok).toBe(true);
    expect(await received).toEqual({
      size: bytes.length,
      sha: createHash('sha256').update(bytes).digest('hex'),
    });
  });

  it('gives a consumer that keeps every chunk the file as it was, up to the ring', async () => {
    // What the ring allows: a consumer may hold FILE_STREAM_RING - 1 chunks it has read, unchanged.
    const dir = tempDir();
    dirs.push(dir);
    const path = join(dir.path, 'list.csv');
    const bytes = randomBytes(CHUNK * (FILE_STREAM_RING - 1));
    writeFileSync(path, bytes);
    const held: Uint8Array[] = [];
    for await (const chunk of fileStream(path)) held.push(chunk);
    expect(Buffer.concat(held).equals(bytes)).toBe(true);
  });
});
