// An E7 upload over a raw socket that stops halfway: the headers and the first bytes of a text/csv body are
// sent, the rest only when the test says (or never), so that a test can do something while the service is
// receiving the body (revoke the key, kill the node, start another). fetch cannot pause a body like this.
// And an upload that declares a body and sends only its first bytes, then nothing (a slow or hostile client):
// whether the service answers before the body, and how fast (`stalledUpload`).
import { once } from 'node:events';
import net from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request, type IncomingHttpHeaders } from 'node:http';

export interface StalledUpload {
  /** Sends the rest of the body; answers the status and body of the service's answer. */
  finish(): Promise<{ status: number; body: string }>;
  /** Drops the connection without sending the rest. */
  abandon(): void;
}

/** Starts E7 at `base` with `body` as a text/csv list (header row), sending only `sentFirst` bytes of it. */
export async function startStalledUpload(
  base: string,
  key: string,
  body: Buffer,
  sentFirst: number,
): Promise<StalledUpload> {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close');
  socket.write(
    `POST /v5/list?header=true HTTP/1.1\r\nHost: ${url.host}\r\napi_key: ${key}\r\n` +
      `Content-Type: text/csv\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
  );
  socket.write(body.subarray(0, sentFirst));
  return {
    async finish() {
      socket.write(body.subarray(sentFirst));
      await closed;
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      let answer = rest.join('\r\n\r\n');
      // A chunked answer: its one chunk.
      if (/transfer-encoding: chunked/i.test(head)) answer = answer.split('\r\n')[1] ?? '';
      return { status, body: answer };
    },
    abandon() {
      socket.destroy();
    },
  };
}

/** A list body of `rows` addresses and about `bytes` bytes at least. */
export function listBody(rows: number, tag = 'row'): Buffer {
  const lines = ['email,note'];
  for (let i = 0; i < rows; i++) lines.push(`${tag}${i}@example.com,${'x'.repeat(40)}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** The `.part` files (uploads being received) anywhere under `dir`. */
export function partFiles(dir: string): string[] {
  let found: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found = found.concat(partFiles(path));
    else if (entry.name.endsWith('.part')) found.push(path);
  }
  return found;
}

export interface EarlyAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** When it came, after the request was sent. */
  readonly ms: number;
}

export interface UnansweredUpload {
  /** The answer, if one comes while the body has not arrived. */
  readonly answer: Promise<EarlyAnswer>;
  /** The answer within `ms`, or undefined (none came). */
  within(ms: number): Promise<EarlyAnswer | undefined>;
  /** Closes the socket: the upload ends, cut short. */
  close(): void;
}

/**
 * POST /v5/list with Content-Length `declared` and only `first` of the body sent. `type` is the Content-Type
 * (a multipart body's boundary is declared and never reached).
 */
export function stalledUpload(
  base: string,
  key: string,
  declared: number,
  {
    type = 'text/csv',
    first = 'email\na@example.com\n',
    query = 'header=true',
  }: { readonly type?: string; readonly first?: string; readonly query?: string } = {},
): UnansweredUpload {
  const started = Date.now();
  const contentType = type === 'multipart/form-data' ? `${type}; boundary=stalled` : type;
  const body =
    type === 'multipart/form-data'
      ? `--stalled\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\n${first}`
      : first;
  const sent = request(`${base}/v5/list?${query}`, {
    method: 'POST',
    headers: { api_key: key, 'content-type': contentType, 'content-length': String(declared) },
  });
  const answer = new Promise<EarlyAnswer>((resolve, reject) => {
    sent.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text,
          ms: Date.now() - started,
        }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
  });
  // Closed by the test (or by the service after its answer): no unhandled rejection.
  answer.catch(() => undefined);
  sent.flushHeaders();
  sent.write(body);
  return {
    answer,
    within: (ms) =>
      Promise.race([
        answer.catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms)),
      ]),
    close: () => sent.destroy(),
  };
}
