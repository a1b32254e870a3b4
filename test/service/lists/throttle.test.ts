// The list endpoints' limits per key (service/http/throttle.ts; issue 36, point 6) on a single node: a flood
// of E8, E10, finish or purchase by one key gets 429 with Retry-After and words, while a client polling as the
// tests' helpers do (every 50 ms) or as the spec asks (every 5 s a list) is never refused, and a key without
// a rate limit (the desktop's own key to its embedded service) has none of these limits. Downloads also count
// while they are sent: a fifth at once is refused until one ends.
import { PassThrough } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../../service/store/keys.js';
import { DOWNLOADS_AT_ONCE, LIST_ALLOWANCES, ListThrottle } from '../../../service/http/throttle.js';
import { startListService, submit, waitForList, type ListService } from './helpers.js';

let svc: ListService;

beforeAll(async () => {
  svc = await startListService();
});

afterAll(() => svc?.close());

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly message: string;
}

async function call(url: string, key: string, method = 'GET'): Promise<Answer> {
  const response = await fetch(url, { method, headers: { api_key: key } });
  const text = await response.text();
  const message =
    response.status === 429 ? (JSON.parse(text) as { error_msg: string }).error_msg : text.slice(0, 80);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), message };
}

/** `total` calls, `lanes` at a time. */
async function flood(total: number, next: () => Promise<Answer>, lanes = 8): Promise<Answer[]> {
  const answers: Answer[] = [];
  let started = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (started++ < total) answers.push(await next());
    }),
  );
  return answers;
}

const statuses = (answers: readonly Answer[]) => {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
};

async function listOf(key: string): Promise<number> {
  const sent = await submit(svc.url, key, 'email\na@example.com\nb@example.com\n', {
    query: { header: 'true' },
    as: 'text',
  });
  expect(sent.status, sent.text).toBe(202);
  const id = sent.json<{ list_id: number }>().list_id;
  expect((await waitForList(svc.url, key, id)).status).toBe('Results');
  return id;
}

describe('the list endpoints of a single node', { timeout: 60_000 }, () => {
  it('answers a flood of E8 by one key 429 with Retry-After and words, after a burst of 60', async () => {
    const key = svc.key({ rateLimit: 500 });
    const id = await listOf(key);
    const started = Date.now();
    const answers = await flood(200, () => call(`${svc.url}/v5/list/${id}`, key));
    const seconds = (Date.now() - started) / 1000;
    const counts = statuses(answers);
    expect(Object.keys(counts).sort()).toEqual(['200', '429']);
    // Its list's polls (every 50 ms until it was complete) spent some of the burst.
    expect(counts[200]).toBeGreaterThanOrEqual(LIST_ALLOWANCES.status.burst / 2);
    expect(counts[200]).toBeLessThanOrEqual(
      LIST_ALLOWANCES.status.burst + Math.ceil(LIST_ALLOWANCES.status.perSecond * seconds),
    );
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(refused.retryAfter).toBe('1');
    expect(refused.message).toBe(
      "Too many requests: this key may ask a list's status 20 times a second (the spec asks once every 5 s a list); try again in 1 s.",
    );
  });

  it('answers a flood of E10, finish and purchase 429, each with a limit of its own', async () => {
    const key = svc.key({ rateLimit: 500 });
    const id = await listOf(key);
    // Two at a time: within the downloads a key may run at once (below).
    const results = await flood(40, () => call(`${svc.url}/v5/list/${id}/results`, key), 2);
    expect(statuses(results)[200]).toBeLessThanOrEqual(LIST_ALLOWANCES.download.burst + 2);
    expect(results.map((answer) => answer.message)).toContainEqual(
      expect.stringMatching(
        /^Too many requests: this key may download 20 results or explanation files a minute; try again in [1-3] s\.$/,
      ),
    );
    const changes = await flood(40, () =>
      call(`${svc.url}/v5/list/${id}/${Math.random() < 0.5 ? 'finish' : 'purchase'}`, key, 'POST'),
    );
    expect(statuses(changes)[200]).toBeLessThanOrEqual(LIST_ALLOWANCES.change.burst + 5);
    const refused = changes.find((answer) => answer.status === 429)!;
    expect(refused.retryAfter).toBe('1');
    expect(refused.message).toBe(
      'Too many requests: this key may finish or purchase lists once a second; try again in 1 s.',
    );
    // Each kind has its own allowance: E8 still answers.
    expect((await call(`${svc.url}/v5/list/${id}`, key)).status).toBe(200);
  });

  it('never refuses a client polling E8 every 50 ms, nor a key without a rate limit', async () => {
    const key = svc.key({ rateLimit: 500 });
    const id = await listOf(key);
    for (const deadline = Date.now() + 3000; Date.now() < deadline;) {
      expect((await call(`${svc.url}/v5/list/${id}`, key)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const free = svc.key({ rateLimit: 0 });
    const freeId = await listOf(free);
    expect(statuses(await flood(200, () => call(`${svc.url}/v5/list/${freeId}`, free)))).toEqual({
      200: 200,
    });
    expect(statuses(await flood(40, () => call(`${svc.url}/v5/list/${freeId}/results`, free)))).toEqual({
      200: 40,
    });
  });
});

describe('ListThrottle', () => {
  const key = { id: 7, rateLimit: 500 } as KeyRecord;
  let app: FastifyInstance;
  let url: string;
  const throttle = new ListThrottle();
  /** The bodies of the downloads being sent: each stays open until the test ends it. */
  const bodies: PassThrough[] = [];

  beforeAll(async () => {
    app = Fastify();
    app.get('/download', (_request, reply) => {
      if (!throttle.admit(key, 'download', reply)) return reply;
      const body = new PassThrough();
      bodies.push(body);
      body.write('the first bytes\n');
      return reply.type('text/plain').send(body);
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    for (const body of bodies) body.end();
    await app.close();
  });

  it(`lets a key download ${DOWNLOADS_AT_ONCE} files at once, and one more when one of them ends`, async () => {
    const open = [];
    for (let i = 0; i < DOWNLOADS_AT_ONCE; i++) {
      const response = await fetch(`${url}/download`);
      expect(response.status).toBe(200);
      open.push(response);
    }
    const fifth = await fetch(`${url}/download`);
    expect(fifth.status).toBe(429);
    expect(fifth.headers.get('retry-after')).toBe('1');
    expect(((await fifth.json()) as { error_msg: string }).error_msg).toBe(
      'Too many requests: this key may download 4 results or explanation files at once; try again in 1 s.',
    );
    bodies[0].end('the last bytes\n');
    expect(await open[0].text()).toBe('the first bytes\nthe last bytes\n');
    // A download whose client went away counts no more either.
    await open[1].body!.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 2; i++) expect((await fetch(`${url}/download`)).status).toBe(200);
    expect((await fetch(`${url}/download`)).status).toBe(429);
  });

  it('never refuses a key polling each of 100 lists every 5 s, for ten minutes of its clock', async () => {
    let now = 0;
    const clocked = new ListThrottle(() => now);
    const polled = Fastify();
    polled.get('/status', (_request, reply) =>
      clocked.admit(key, 'status', reply) ? reply.send('{}') : reply,
    );
    const poll = async () => (await polled.inject({ method: 'GET', url: '/status' })).statusCode;
    try {
      const answers = new Set<number>();
      // 100 lists, each polled every 5 s: one of them every 50 ms.
      for (; now < 600_000; now += 50) answers.add(await poll());
      expect([...answers]).toEqual([200]);
      // Twice as fast is refused once the burst is spent: after 120 calls, not before 100.
      const refusedAt: number[] = [];
      for (let i = 0; i < 200; i++, now += 25) if ((await poll()) === 429) refusedAt.push(i);
      expect(refusedAt[0]).toBeGreaterThanOrEqual(100);
      expect(refusedAt[0]).toBeLessThanOrEqual(121);
    } finally {
      await polled.close();
    }
  });
});
