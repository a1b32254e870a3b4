// An E7 upload over a raw socket that stops halfway: the headers and the first bytes of a text/csv body are
// sent, the rest only when the test says (or never), so that a test can do something while the service is
// receiving the body (revoke the key, kill the node, start another). fetch cannot pause a body like this.
// And an upload that declares a body and sends only its first bytes, then nothing (a slow or hostile client):
// whether the service answers before the body, and how fast (`stalledUpload`).
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { answerOf, requestHead, stalledClient } from './stalledClients.js';

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
  const head = requestHead('POST', '/v5/list?header=true', body.length, {
    api_key: key,
    'Content-Type': 'text/csv',
    Connection: 'close',
  });
  const client = stalledClient(Number(new URL(base).port), head, body.subarray(0, sentFirst));
  await once(client.socket, 'connect');
  return {
    async finish() {
      client.write(body.subarray(sentFirst));
      await client.closed;
      const { status, body: answer } = answerOf(client.text());
      return { status, body: answer };
    },
    abandon() {
      client.socket.destroy();
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
  /** Its headers, by lower-case name. */
  readonly headers: Record<string, string>;
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
  const contentType = type === 'multipart/form-data' ? `${type}; boundary=stalled` : type;
  const body =
    type === 'multipart/form-data'
      ? `--stalled\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\n${first}`
      : first;
  const head = requestHead('POST', `/v5/list?${query}`, declared, {
    api_key: key,
    'Content-Type': contentType,
  });
  const client = stalledClient(Number(new URL(base).port), head, Buffer.from(body));
  // The answer, once it is whole: its body as long as its Content-Length says, or the connection ended.
  const answer = new Promise<EarlyAnswer>((resolve, reject) => {
    const settle = (isEnded: boolean) => {
      const text = client.text();
      const end = text.indexOf('\r\n\r\n');
      const whole = answerOf(text);
      const length = Number(whole.headers['content-length']);
      const isWhole = end !== -1 && Number.isFinite(length) && text.length - end - 4 >= length;
      if (!isWhole && !isEnded) return;
      if (whole.status === 0) reject(new Error('the connection closed without an answer'));
      else
        resolve({
          status: whole.status,
          headers: whole.headers,
          text: whole.body,
          ms: Date.now() - client.startedAt,
        });
    };
    client.socket.on('data', () => settle(false));
    client.socket.once('end', () => settle(true));
    void client.closed.then(() => settle(true));
  });
  // Closed by the test: no unhandled rejection.
  answer.catch(() => undefined);
  return {
    answer,
    within: (ms) =>
      Promise.race([
        answer.catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(resolve, ms, undefined)),
      ]),
    close: () => client.socket.destroy(),
  };
}
