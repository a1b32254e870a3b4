// The bulk pool answers E4/E6 requests in worker threads: the answers are those of the request thread, two
// requests run at once on two workers, and on Linux both workers run at a lower priority than the request
// thread (bulkPool.ts BULK_WORKER_NICE), so that a burst of bulk work yields to other requests.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkPool, BULK_WORKER_NICE, canLowerWorkerPriority } from '../../../service/identity/bulkPool.js';
import { answerBulk } from '../../../service/identity/bulkWork.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';
import { importFixture, intelligenceTask, md5 } from './fixture.js';

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
    const outcomes = await Promise.all(tasks.map((t) => pool.run(t)));
    const inline = tasks.map((t) => answerBulk(new IdentityStore(db), t));
    for (const [i, outcome] of outcomes.entries()) {
      expect(outcome.ok).toBe(true);
      const expected = inline[i];
      if (!outcome.ok || !expected.ok) return;
      expect(Buffer.from(outcome.json).toString('utf8')).toBe(Buffer.from(expected.json).toString('utf8'));
    }
  });

  it.runIf(canLowerWorkerPriority)('runs both workers at a lower priority than the request thread', () => {
    const nice = threadNiceValues();
    expect(BULK_WORKER_NICE).toBeGreaterThan(0);
    expect(nice.filter((value) => value === BULK_WORKER_NICE)).toHaveLength(2);
    expect(nice.filter((value) => value === 0).length).toBeGreaterThan(1);
  });
});
