// E7 uploads against real servers: a Fastify server with @fastify/multipart (busboy) for the multipart form,
// a node:http server for text/csv and retries.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../../shared/api/index.js';
import { fakeSleep, sendJson, startServer, type TestServer } from './httpServer.js';

const KEY = 'upload-key+/=';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A deterministic CSV of about `bytes` bytes, produced chunk by chunk on demand. */
function csvSource(rows: number): {
  stream: () => ReadableStream<Uint8Array>;
  size: number;
  sha256: string;
  pulls: () => number;
} {
  const encoder = new TextEncoder();
  const rowsPerChunk = 1_000;
  const chunkAt = (index: number) => {
    let text = index === 0 ? 'email,first,last\n' : '';
    for (let row = index * rowsPerChunk; row < Math.min(rows, (index + 1) * rowsPerChunk); row++) {
      text += `person${row}@example.com,First${row},Last${row}\n`;
    }
    return encoder.encode(text);
  };
  const chunks = Math.ceil(rows / rowsPerChunk);
  const hash = createHash('sha256');
  let size = 0;
  for (let index = 0; index < chunks; index++) {
    const chunk = chunkAt(index);
    hash.update(chunk);
    size += chunk.byteLength;
  }
  let pulled = 0;
  return {
    size,
    sha256: hash.digest('hex'),
    pulls: () => pulled,
    stream: () => {
      let index = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (index >= chunks) {
            controller.close();
            return;
          }
          pulled++;
          controller.enqueue(chunkAt(index++));
        },
      });
    },
  };
}

interface Received {
  fieldname: string;
  filename: string;
  mimetype: string;
  bytes: number;
  sha256: string;
  headers: Record<string, unknown>;
  query: Record<string, unknown>;
}

async function multipartServer(): Promise<{ url: string; received: Received[] }> {
  const app: FastifyInstance = Fastify();
  await app.register(multipart, { limits: { fileSize: 512 * 1024 * 1024, files: 1 } });
  const received: Received[] = [];
  app.post('/v5/list', async (request, reply) => {
    const file = await request.file();
    if (!file) return reply.code(400).send({ message: 'no file part' });
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of file.file) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    received.push({
      fieldname: file.fieldname,
      filename: file.filename,
      mimetype: file.mimetype,
      bytes,
      sha256: hash.digest('hex'),
      headers: request.headers,
      query: request.query as Record<string, unknown>,
    });
    return reply.code(202).header('Location', `http://service/v5/list/${received.length}`).send({
      list_id: received.length,
      size_bytes: bytes,
    });
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return { url, received };
}

async function serve(handler: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const server = await startServer(handler);
  closers.push(() => server.close());
  return server;
}

describe('submitList, multipart', () => {
  it('streams a large file as part `file`, received intact by a multipart parser', async () => {
    const source = csvSource(300_000); // about 13 MB
    const { url, received } = await multipartServer();
    const progress: number[] = [];
    const api = createClient({ baseUrl: url, apiKey: KEY, timeoutMs: 10_000 });
    const result = await api.submitList(
      { name: 'customers.csv', body: source.stream(), size: source.size },
      { header: true, fields: ['age', 'gender'], callback_url: 'https://example.com/done' },
      { onProgress: (sent, total) => progress.push(sent, total ?? -1) },
    );
    if (!result.ok) throw new Error(result.error.message);
    expect(result.status).toBe(202);
    expect(result.value).toEqual({
      list_id: 1,
      size_bytes: source.size,
      location: 'http://service/v5/list/1',
    });

    const [got] = received;
    expect(got).toMatchObject({
      fieldname: 'file',
      filename: 'customers.csv',
      mimetype: 'text/csv',
      bytes: source.size,
    });
    expect(got.sha256).toBe(source.sha256);
    expect(got.headers['api_key']).toBe(KEY);
    expect(String(got.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    expect(Number(got.headers['content-length'])).toBeGreaterThan(source.size);
    expect(got.query).toEqual({
      header: 'true',
      name: 'customers.csv',
      fields: 'age,gender',
      callback_url: 'https://example.com/done',
    });

    // Progress counts the file's bytes as they are pulled: many steps, rising, ending at the size.
    const sent = progress.filter((_, index) => index % 2 === 0);
    expect(sent.length).toBeGreaterThan(100);
    expect(sent.every((value, index) => index === 0 || value > sent[index - 1])).toBe(true);
    expect(sent.at(-1)).toBe(source.size);
    expect(progress[1]).toBe(source.size);
  });

  it('uploads a Blob and a string, names non-ASCII files, and sends a zip as application/zip', async () => {
    const { url, received } = await multipartServer();
    const api = createClient({ baseUrl: url, apiKey: KEY });
    const blob = new Blob(['email\na@b.co\n']);
    expect((await api.submitList({ name: 'Kunden-Übersicht.txt', body: blob })).ok).toBe(true);
    expect((await api.submitList({ name: 'list.zip', body: 'PK-not-really-a-zip' })).ok).toBe(true);
    expect(received[0]).toMatchObject({
      filename: 'Kunden-Übersicht.txt',
      mimetype: 'text/plain',
      bytes: blob.size,
    });
    expect(received[1]).toMatchObject({ filename: 'list.zip', mimetype: 'application/zip', bytes: 19 });
  });

  it('never holds a 100 MB file in memory: the source is pulled only as fast as the service reads', async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    const total = 100 * 1024 * 1024;
    let pulled = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    let pulledWhileStalled = -1;
    let received = 0;
    const server = createServer((req, res) => {
      // Read nothing for a while: a buffering client would pull the whole file meanwhile.
      req.pause();
      setTimeout(() => {
        pulledWhileStalled = pulled;
        req.on('data', (data: Buffer) => (received += data.length));
        req.on('end', () => sendJson(res, 202, { list_id: 1, size_bytes: received }));
        req.resume();
      }, 300);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    let lastProgress = 0;
    const result = await createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY }).submitList(
      { name: 'big.txt', body: source, size: total },
      {},
      { onProgress: (sent) => (lastProgress = sent) },
    );
    expect(result).toMatchObject({ ok: true, value: { size_bytes: expect.any(Number) as number } });
    expect(pulledWhileStalled).toBeGreaterThan(0);
    expect(pulledWhileStalled).toBeLessThan(16 * 1024 * 1024);
    expect(lastProgress).toBe(total);
    expect(received).toBeGreaterThan(total);
  });
});

describe('submitList, text/csv', () => {
  it('sends the file as the body with Content-Type text/csv and the key in the header', async () => {
    const server = await serve((req, res) =>
      sendJson(res, 202, { list_id: 3, size_bytes: req.body.length }, { Location: '/v5/list/3' }),
    );
    const source = csvSource(5_000);
    const result = await createClient({ baseUrl: server.url, apiKey: KEY }).submitList(
      { name: 'people.csv', body: source.stream(), size: source.size },
      { header: true, delimiter: ',' },
      { mode: 'text' },
    );
    expect(result).toMatchObject({
      ok: true,
      value: { list_id: 3, size_bytes: source.size, location: '/v5/list/3' },
    });
    const [request] = server.requests;
    expect(request.headers['content-type']).toBe('text/csv');
    expect(request.headers['api_key']).toBe(KEY);
    expect(request.headers['content-length']).toBe(String(source.size));
    expect(createHash('sha256').update(request.body).digest('hex')).toBe(source.sha256);
    expect(request.url.searchParams.get('delimiter')).toBe(',');
    expect(request.url.searchParams.has('api_key')).toBe(false);
  });
});

describe('submitList, retries and refusals', () => {
  it('retries a Blob upload refused with 429, sending the whole file again', async () => {
    let calls = 0;
    const server = await serve((req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(429, { 'Retry-After': '1' });
        res.end();
        return;
      }
      sendJson(res, 202, { list_id: 9, size_bytes: req.body.length });
    });
    const { delays, sleep } = fakeSleep();
    const text = 'email\n' + 'x@example.com\n'.repeat(1000);
    const result = await createClient({ baseUrl: server.url, apiKey: KEY, sleep }).submitList({
      name: 'a.csv',
      body: new Blob([text]),
    });
    expect(result).toMatchObject({ ok: true, value: { list_id: 9 } });
    expect(delays).toEqual([1000]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0].body.equals(server.requests[1].body)).toBe(true);
  });

  it('retries a file opened for each attempt, refused before its body, sending it whole and closing the refused one', async () => {
    // A service that refuses the first upload at once, its body unread (as E7 does past a key's uploads at
    // once), and reads the next one whole.
    const bodies: { bytes: number; sha256: string }[] = [];
    let requests = 0;
    const server = createServer((req, res) => {
      if (requests++ === 0) {
        res.writeHead(429, { 'Retry-After': '2', Connection: 'close', 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error_msg: 'Too many uploads at once.' }));
        setTimeout(() => req.socket.destroy(), 200);
        return;
      }
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      req.on('end', () => {
        bodies.push({ bytes, sha256: hash.digest('hex') });
        sendJson(res, 202, { list_id: 4, size_bytes: bytes });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const source = csvSource(200_000);
    const opened: { cancelled: boolean }[] = [];
    const open = () => {
      const state = { cancelled: false };
      opened.push(state);
      const reader = source.stream().getReader();
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        async cancel(reason) {
          state.cancelled = true;
          await reader.cancel(reason);
        },
      });
    };
    const { delays, sleep } = fakeSleep();
    const result = await createClient({ baseUrl: url, apiKey: KEY, sleep }).submitList(
      { name: 'a.csv', body: open, size: source.size },
      {},
      { mode: 'text' },
    );
    expect(result).toMatchObject({ ok: true, value: { list_id: 4 } });
    expect(delays).toEqual([2000]);
    // Opened again for the second attempt, which sent the whole file; the refused attempt's file was closed.
    expect(opened).toHaveLength(2);
    expect(bodies).toEqual([{ bytes: source.size, sha256: source.sha256 }]);
    expect(opened[0].cancelled).toBe(true);
  });

  it('never retries a stream upload, whose stream is consumed', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503, { 'Retry-After': '1' });
      res.end('busy');
    });
    const { delays, sleep } = fakeSleep();
    const source = csvSource(2_000);
    const result = await createClient({ baseUrl: server.url, apiKey: KEY, sleep, retries: 5 }).submitList({
      name: 'a.csv',
      body: source.stream(),
    });
    expect(result).toMatchObject({ ok: false, error: { kind: 'http', status: 503 } });
    expect(delays).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a name without .txt, .csv or .zip before sending anything', async () => {
    const server = await serve((_req, res) => sendJson(res, 202, { list_id: 1, size_bytes: 0 }));
    const api = createClient({ baseUrl: server.url, apiKey: KEY });
    const result = await api.submitList({ name: 'list.xlsx', body: 'x' });
    expect(result).toMatchObject({ ok: false, error: { kind: 'invalid-request' } });
    const badCallback = await api.submitList({ name: 'a.csv', body: 'x' }, { callback_url: 'ftp://x' });
    expect(badCallback).toMatchObject({ ok: false, error: { kind: 'invalid-request' } });
    const zipAsText = await api.submitList({ name: 'a.zip', body: 'x' }, {}, { mode: 'text' });
    expect(zipAsText).toMatchObject({ ok: false, error: { kind: 'invalid-request' } });
    expect(server.requests).toHaveLength(0);
  });

  it('times out a stalled upload and reports progress up to the stall', async () => {
    const server = await serve((_req, res) => sendJson(res, 202, { list_id: 1, size_bytes: 0 }));
    let sentChunks = 0;
    const stalled = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sentChunks++ < 3) controller.enqueue(new TextEncoder().encode('email\n'));
        else return new Promise(() => undefined); // the source stops producing
      },
    });
    const progress: number[] = [];
    const result = await createClient({ baseUrl: server.url, apiKey: KEY, timeoutMs: 300 }).submitList(
      { name: 'a.csv', body: stalled },
      {},
      { onProgress: (sent) => progress.push(sent) },
    );
    expect(result).toMatchObject({ ok: false, error: { kind: 'timeout' } });
    expect(progress).toEqual([6, 12, 18]);
  });
});
