import { afterEach, describe, expect, it } from 'vitest';
import {
  createClient,
  effectivePollInterval,
  pollList,
  type ApiResult,
  type CallOptions,
  type Client,
  type ListResource,
} from '../../../shared/api/index.js';
import { fakeSleep, sendJson, startServer, type TestServer } from './httpServer.js';

const list = (status: string, completed = 0): ListResource => ({
  list_id: 5,
  name: 'a.csv',
  status,
  records: 10,
  size_bytes: 100,
  created_at: '2024-05-01T10:00:00Z',
  services: { email_validation: { input_count: 10, completed_count: completed, status: 'Processing' } },
});

/** A stand-in for the client: answers in turn, each answer taking `takesMs` of fake time. */
function scripted(baseUrl: string, answers: ApiResult<ListResource>[], clock: { now: number }, takesMs = 0) {
  const starts: number[] = [];
  const calls: CallOptions[] = [];
  const client: Pick<Client, 'baseUrl' | 'listStatus'> = {
    baseUrl,
    listStatus: (_id, options = {}) => {
      starts.push(clock.now);
      calls.push(options);
      clock.now += takesMs;
      return Promise.resolve(answers.shift() ?? { ok: true, value: list('Results', 10), status: 200 });
    },
  };
  return { client, starts, calls };
}

const ok = (value: ListResource): ApiResult<ListResource> => ({ ok: true, value, status: 200 });

describe('pollList', () => {
  it('never polls a remote service faster than every 5 s, whatever it is asked', async () => {
    const clock = { now: 1_000_000 };
    const { client, starts, calls } = scripted(
      'https://api.example.com',
      [ok(list('Pending')), ok(list('Processing', 4)), ok(list('Processed', 8))],
      clock,
      1_200,
    );
    const { sleep, delays } = fakeSleep(clock);
    const updates: string[] = [];
    const result = await pollList(client, 5, {
      intervalMs: 1_000,
      sleep,
      now: () => clock.now,
      onUpdate: (update) => updates.push(update.status),
    });
    expect(result).toMatchObject({ ok: true, value: { status: 'Results' } });
    expect(updates).toEqual(['Pending', 'Processing', 'Processed', 'Results']);
    const gaps = starts.slice(1).map((start, index) => start - starts[index]);
    expect(gaps).toEqual([5_000, 5_000, 5_000]);
    // The request's own time counts toward the interval.
    expect(delays).toEqual([3_800, 3_800, 3_800]);
    // The client's retries would poll faster than allowed: each request is made without them.
    expect(calls.every((call) => call.retries === 0)).toBe(true);
  });

  it('lets the embedded service on loopback be polled faster', () => {
    expect(effectivePollInterval('http://127.0.0.1:4000', 200)).toBe(200);
    expect(effectivePollInterval('http://localhost:4000', 10)).toBe(25);
    expect(effectivePollInterval('http://[::1]:4000', 500)).toBe(500);
    expect(effectivePollInterval('https://api.example.com', 200)).toBe(5_000);
    expect(effectivePollInterval('https://api.example.com')).toBe(5_000);
    expect(effectivePollInterval('https://api.example.com', 60_000)).toBe(60_000);
  });

  it('rides out transient failures, stretching the wait to a Retry-After', async () => {
    const clock = { now: 0 };
    const { client, starts } = scripted(
      'https://api.example.com',
      [
        ok(list('Pending')),
        { ok: false, error: { kind: 'network', message: 'reset' } },
        { ok: false, error: { kind: 'http', status: 429, message: 'slow', retryAfterMs: 20_000 } },
        ok(list('Error')),
      ],
      clock,
    );
    const result = await pollList(client, 5, { sleep: fakeSleep(clock).sleep, now: () => clock.now });
    expect(result).toMatchObject({ ok: true, value: { status: 'Error' } });
    expect(starts).toEqual([0, 5_000, 10_000, 30_000]);
  });

  it('stops at once on a 404, and after too many transient failures in a row', async () => {
    const clock = { now: 0 };
    const notFound = scripted(
      'https://api.example.com',
      [{ ok: false, error: { kind: 'http', status: 404, message: 'gone' } }],
      clock,
    );
    expect(
      await pollList(notFound.client, 5, { sleep: fakeSleep(clock).sleep, now: () => clock.now }),
    ).toMatchObject({
      ok: false,
      error: { status: 404 },
    });
    expect(notFound.starts).toHaveLength(1);

    const down: ApiResult<ListResource> = {
      ok: false,
      error: { kind: 'http', status: 502, message: 'down' },
    };
    const flaky = scripted('https://api.example.com', [down, down, down, down], clock);
    const result = await pollList(flaky.client, 5, {
      sleep: fakeSleep(clock).sleep,
      now: () => clock.now,
      maxConsecutiveErrors: 3,
    });
    expect(result).toMatchObject({ ok: false, error: { status: 502 } });
    expect(flaky.starts).toHaveLength(3);
  });

  it('stops when its signal aborts', async () => {
    const clock = { now: 0 };
    const controller = new AbortController();
    const { client } = scripted('https://api.example.com', [ok(list('Pending')), ok(list('Pending'))], clock);
    const result = await pollList(client, 5, {
      signal: controller.signal,
      now: () => clock.now,
      onUpdate: () => controller.abort(),
      sleep: fakeSleep(clock).sleep,
    });
    expect(result).toMatchObject({ ok: false, error: { kind: 'aborted' } });
  });
});

describe('pollList against a real service', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it('follows a list to Results with the real client and real time', async () => {
    const statuses = ['Pending', 'Processing', 'Results'];
    server = await startServer((req, res) => {
      expect(req.headers['api_key']).toBe('k');
      sendJson(res, 200, list(statuses.shift() ?? 'Results', 10));
    });
    const client = createClient({ baseUrl: server.url, apiKey: 'k' });
    const started = Date.now();
    const result = await pollList(client, 5, { intervalMs: 100 });
    expect(result).toMatchObject({ ok: true, value: { status: 'Results' } });
    expect(server.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});
