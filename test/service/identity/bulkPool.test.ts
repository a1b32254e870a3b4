// The bulk pool answers E4/E6 requests in worker threads: the answers are those of the request thread, two
// requests run at once on two workers, and on Linux both workers run at a lower priority than the request
// thread (bulkPool.ts BULK_WORKER_NICE), so that a burst of bulk work yields to other requests. Its queue
// shares between keys: a free worker takes the next request of the key whose turn it is, and a key holds at
// most its share of the queue's places, so that one key flooding E6 leaves another key's requests answered
// 200, soon, where the one queue of arrival order answered them 503.
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  BulkPool,
  BulkShareError,
  BULK_QUEUE_PER_KEY,
  BULK_WORKER_NICE,
} from '../../../service/identity/bulkPool.js';
import { answerBulk } from '../../../service/identity/bulkWork.js';
import { canLowerThreadPriority } from '../../../service/threadPriority.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';
import { importFixture, intelligenceTask, md5, postJson, query } from './fixture.js';

/** The nice values of this process's threads (Linux). */
function threadNiceValues(): number[] {
  const values: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      // Fields after the command name: state is the first, nice the 17th.
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      values.push(Number(fields[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return values;
}

describe('bulk pool', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;
  let pool: BulkPool;

  const task = (records: unknown[]) => intelligenceTask(records);
  const records = Array.from({ length: 5000 }, (_, i) =>
    i % 2 ? { email: 'jane.doe@example.com' } : { md5_email: md5(`nobody.${i}@example.com`) },
  );

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    await importFixture(db, dir.path);
    pool = new BulkPool({ dbPath: db.name, threads: 1, idleThreads: 2 }, new IdentityStore(db));
  });

  afterAll(async () => {
    await pool.close();
    db.close();
    dir.remove();
  });

  it('answers in workers as the request thread does, two requests at once', async () => {
    const tasks = [task(records), task(records.slice(0, 4000))];
    const outcomes = await Promise.all(tasks.map((t, i) => pool.run(t, i)));
    const inline = tasks.map((t) => answerBulk(new IdentityStore(db), t));
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome.ok).toBe(true);
      const expected = inline[i];
      if (!outcome.ok || !expected.ok) return;
      expect(Buffer.from(outcome.json).toString('utf8')).toBe(Buffer.from(expected.json).toString('utf8'));
    }
  });

  it.runIf(canLowerThreadPriority)('runs both workers at a lower priority than the request thread', () => {
    // Below the thread that made the pool (this one); test/service/threadPriority.test.ts: under `nice`.
    const base = getPriority();
    const nice = threadNiceValues();
    expect(BULK_WORKER_NICE).toBeGreaterThan(0);
    expect(nice.filter((value) => value === base + BULK_WORKER_NICE)).toHaveLength(2);
    expect(nice.filter((value) => value === base).length).toBeGreaterThan(1);
  });
});

describe('bulk pool: fair shares between keys', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;
  let pool: BulkPool;
  const A = 1;
  const B = 2;

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    await importFixture(db, dir.path);
    // One worker: the order requests are taken in is the order they are answered in.
    pool = new BulkPool({ dbPath: db.name, threads: 1, idleThreads: 1 }, new IdentityStore(db));
  });

  afterAll(async () => {
    await pool.close();
    db.close();
    dir.remove();
  });

  const small = intelligenceTask(Array.from({ length: 200 }, (_, i) => ({ email: `p${i}@example.com` })));

  it('takes waiting requests by turns of the keys: key B’s three requests after key A’s nine are answered among the first seven', async () => {
    const answered: string[] = [];
    const run = (owner: number, name: string) =>
      pool.run(small, owner).then((outcome) => {
        expect(outcome.ok).toBe(true);
        answered.push(name);
      });
    const all = [
      // One running and its share waiting.
      ...Array.from({ length: 1 + BULK_QUEUE_PER_KEY }, (_, i) => run(A, `A${i}`)),
      ...Array.from({ length: 3 }, (_, i) => run(B, `B${i}`)),
    ];
    await Promise.all(all);
    // A0 was running already; then A and B by turns.
    expect(answered.slice(0, 7)).toEqual(['A0', 'A1', 'B0', 'A2', 'B1', 'A3', 'B2']);
    expect(answered.slice(7)).toEqual(Array.from({ length: BULK_QUEUE_PER_KEY - 3 }, (_, i) => `A${i + 4}`));
  });

  it('lets a key hold at most its share of the queue: beyond it its requests are refused, another key’s are queued', async () => {
    const flood = Array.from({ length: BULK_QUEUE_PER_KEY + 11 }, () =>
      pool.run(small, A).then(
        () => 'answered',
        (error: unknown) => (error instanceof BulkShareError ? 'refused' : String(error)),
      ),
    );
    const other = pool.run(small, B);
    expect(pool.refusal(A)).toBeInstanceOf(BulkShareError);
    expect(pool.refusal(B)).toBeUndefined();
    const outcomes = await Promise.all(flood);
    // One running, its share waiting; the rest refused at once.
    expect(outcomes.filter((outcome) => outcome === 'answered')).toHaveLength(1 + BULK_QUEUE_PER_KEY);
    expect(outcomes.filter((outcome) => outcome === 'refused')).toHaveLength(10);
    expect((await other).ok).toBe(true);
  });
});

describe('E6 while another key floods it', () => {
  let service: TestService;
  let dir: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    service = await startTestService();
    dir = tempDir();
    await importFixture(service.db, dir.path);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await service.close();
    dir.remove();
  });

  /** Key A's requests and key B's differ by their records, so that the pool's work can be told apart. */
  const recordsOf = (who: string) =>
    Array.from({ length: 500 }, (_, i) => ({ email: `${who}.person${i}@example.com` }));
  const e6 = async (key: string, who: 'a' | 'b') =>
    (await postJson(service.url, `/v5/ei/bulk?${query({ api_key: key })}`, recordsOf(who))).status;

  it('answers key B 200, each after at most a few of key A’s requests, while key A keeps 300 requests in flight', async () => {
    const flooder = service.key({ services: ['intelligence'], rateLimit: 0 });
    const other = service.key({ services: ['intelligence'], rateLimit: 0 });
    const bodyOfB = JSON.stringify(recordsOf('b'));
    // The pool's work as it happens: whose request was taken into the pool, and whose was answered.
    const events: { isB: boolean; what: 'asked' | 'answered' }[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its pool as `this` below
    const run = BulkPool.prototype.run;
    vi.spyOn(BulkPool.prototype, 'run').mockImplementation(function (this: BulkPool, task, owner) {
      const isB = task.body === bodyOfB;
      events.push({ isB, what: 'asked' });
      const outcome = run.call(this, task, owner);
      void outcome.then(() => events.push({ isB, what: 'answered' })).catch(() => undefined);
      return outcome;
    });
    expect(await e6(other, 'b')).toBe(200);
    const flood = Array.from({ length: 300 }, () => e6(flooder, 'a'));
    // Key B asks once key A's requests are coming in.
    while (events.filter((event) => !event.isB).length < 50)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const answers = await Promise.all(Array.from({ length: 5 }, () => e6(other, 'b')));
    const flooded = await Promise.all(flood);
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    // B's requests wait for the requests running and their turns (five at once: five turns of A, two A's
    // running and one more beside B's last), not for key A's queue: A's answers from B's first request taken
    // into the pool to B's last answered are counted.
    const first = events.findIndex((event, i) => i > 1 && event.isB);
    const last = events.findLastIndex((event) => event.isB);
    const meanwhile = events.slice(first, last).filter((event) => !event.isB && event.what === 'answered');
    expect(meanwhile.length).toBeLessThanOrEqual(10);
    // Key A: answered up to its share of the queue, refused 429 beyond it; the queue was never full (503).
    expect(flooded.filter((status) => status === 200).length).toBeGreaterThanOrEqual(BULK_QUEUE_PER_KEY);
    expect(flooded.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  }, 60_000);
});
