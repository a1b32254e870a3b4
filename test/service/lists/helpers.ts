// Helpers of the list tests: a real service on 127.0.0.1:0 over a fresh data folder (reopenable on the same
// folder, for restarts), and E7–E10 over real HTTP.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService, type RunningService } from '../../../service/server.js';
import type { ListServiceOptions } from '../../../service/lists/node/processor.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { createKey, type KeyConfig } from '../../../service/store/keys.js';
import { isFinalListStatus, listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { tempDir } from '../../helpers/service.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'lists');
export const fixture = (path: string): Buffer => readFileSync(join(FIXTURES, path));

/** Test services keep their workers between lists (each test submits several); callbacks retry fast. */
export const TEST_LIST_OPTIONS: ListServiceOptions = {
  idleMs: 30_000,
  callback: { retryDelaysMs: [100, 200, 400], timeoutMs: 2_000 },
};

export interface ListService {
  url: string;
  readonly db: ServiceDb;
  readonly dataDir: string;
  service: RunningService;
  /** A key on this service (validation and corrections unless configured otherwise). */
  key(config?: Partial<KeyConfig>): string;
  /** Stops the service (lists keep their state on disk) and starts it again on the same folder. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startListService(options: ListServiceOptions = {}): Promise<ListService> {
  const dir = tempDir('mailsieve-lists-');
  const db = openServiceDb(dir.path);
  const lists = { ...TEST_LIST_OPTIONS, ...options };
  const handle: ListService = {
    url: '',
    db,
    dataDir: dir.path,
    service: await startService({ dataDir: dir.path, db, port: 0, lists }),
    key: (config = {}) =>
      createKey(db, {
        mode: 'safe_to_send',
        services: ['validation', 'corrections'],
        rateLimit: 0,
        ...config,
      }).key,
    async restart() {
      await handle.service.close();
      handle.service = await startService({ dataDir: dir.path, db, port: 0, lists });
      handle.url = handle.service.url;
    },
    async close() {
      await handle.service.close();
      db.close();
      dir.remove();
    },
  };
  handle.url = handle.service.url;
  return handle;
}

export interface SubmitOptions {
  readonly query?: Record<string, string>;
  /** `multipart` (default: part `file` named `fileName`), `text` (text/csv body) or a Content-Type to send. */
  readonly as?: 'multipart' | 'text' | (string & {});
  readonly fileName?: string;
  readonly partName?: string;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  json<T = unknown>(): T;
}

async function answer(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: <T>() => JSON.parse(text) as T };
}

/** E7 over HTTP. */
export async function submit(
  base: string,
  key: string | undefined,
  body: Uint8Array | string,
  options: SubmitOptions = {},
): Promise<HttpAnswer> {
  const query = new URLSearchParams(options.query ?? {}).toString();
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.api_key = key;
  let payload: NonNullable<RequestInit['body']>;
  const as = options.as ?? 'multipart';
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (as === 'multipart') {
    const form = new FormData();
    form.append(options.partName ?? 'file', new Blob([bytes]), options.fileName ?? 'list.csv');
    payload = form;
  } else {
    headers['content-type'] = as === 'text' ? 'text/csv' : as;
    payload = bytes;
  }
  return answer(
    await fetch(`${base}/v5/list${query ? `?${query}` : ''}`, { method: 'POST', headers, body: payload }),
  );
}

export async function getStatus(base: string, key: string, id: number | string): Promise<HttpAnswer> {
  return answer(await fetch(`${base}/v5/list/${id}`, { headers: { api_key: key } }));
}

export async function getResults(
  base: string,
  key: string,
  id: number | string,
): Promise<HttpAnswer & { bytes: Buffer }> {
  const response = await fetch(`${base}/v5/list/${id}/results`, { headers: { api_key: key } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    text: bytes.toString('utf8'),
    bytes,
    json: <T>() => JSON.parse(bytes.toString('utf8')) as T,
  };
}

export async function purchase(
  base: string,
  key: string,
  id: number | string,
  body?: unknown,
  type = 'application/json',
): Promise<HttpAnswer> {
  return answer(
    await fetch(`${base}/v5/list/${id}/purchase`, {
      method: 'POST',
      headers: { api_key: key, ...(body !== undefined ? { 'content-type': type } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    }),
  );
}

/** Polls E8 (every 50 ms: our own service) until the list's status is final; answers the last document. */
export async function waitForList(
  base: string,
  key: string,
  id: number,
  timeoutMs = 60_000,
): Promise<ListResource> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await getStatus(base, key, id);
    if (status.status !== 200) throw new Error(`E8 answered ${status.status}: ${status.text}`);
    const list = listResourceSchema.parse(status.json());
    if (isFinalListStatus(list.status)) return list;
    if (Date.now() > deadline) throw new Error(`list ${id} still ${list.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Submits and waits: the final document, and the results when there are any. */
export async function runList(
  base: string,
  key: string,
  body: Uint8Array | string,
  options: SubmitOptions = {},
): Promise<{ list: ListResource; results?: Awaited<ReturnType<typeof getResults>> }> {
  const submitted = await submit(base, key, body, options);
  if (submitted.status !== 202) throw new Error(`E7 answered ${submitted.status}: ${submitted.text}`);
  const id = submitted.json<{ list_id: number }>().list_id;
  const list = await waitForList(base, key, id);
  if (list.status !== 'Results') return { list };
  return { list, results: await getResults(base, key, id) };
}

/** A healthy request: E1 answers 200. */
export async function isHealthy(base: string, key: string): Promise<boolean> {
  const response = await fetch(`${base}/v5/ev?email=jane%40example.com&api_key=${encodeURIComponent(key)}`);
  await response.arrayBuffer();
  return response.status === 200;
}

/** Rows of a results text (no quoted line breaks in these tests). */
export function lines(text: string): string[] {
  return text.split(/\r\n|\n|\r/).filter((line, i, all) => !(line === '' && i === all.length - 1));
}
