// Answers prepared ahead (prepared.ts): an import leaves them to prepare, the service prepares them in a
// background worker (preparer.ts), and a store answers the same before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBulk } from '../../../service/identity/bulkWork.js';
import { loadDemo } from '../../../service/identity/demo.js';
import { answersWaiting } from '../../../service/identity/prepared.js';
import { AnswerPreparer } from '../../../service/identity/preparer.js';
import { IdentityStore } from '../../../service/identity/store.js';
import { openServiceDb, type ServiceDb } from '../../../service/store/db.js';
import { tempDir } from '../../helpers/service.js';
import { intelligenceTask } from './fixture.js';

describe('answers prepared in the background', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: ServiceDb;

  beforeAll(async () => {
    dir = tempDir();
    db = openServiceDb(dir.path);
    await loadDemo(db, { people: 3_000, seed: 7 });
  });

  afterAll(() => {
    db.close();
    dir.remove();
  });

  it('prepares every person and address an import left, and E6 answers the same before and after', async () => {
    const emails = db
      .prepare<[], string>('SELECT email FROM ref_emails ORDER BY id LIMIT 5000')
      .pluck()
      .all();
    const task = intelligenceTask(emails.map((email) => ({ email })));
    const answer = () => {
      const outcome = answerBulk(new IdentityStore(db), task);
      if (!outcome.ok) throw new Error(outcome.message);
      return Buffer.from(outcome.json).toString('utf8');
    };
    const before = answer();
    const waiting = answersWaiting(db);
    expect(waiting.people).toBeGreaterThan(2_000);

    const preparer = new AnswerPreparer(db);
    await preparer.whenIdle();
    await preparer.close();
    expect(preparer.failure).toBeUndefined();
    expect(answersWaiting(db)).toEqual({ people: 0, addresses: 0 });
    expect(preparer.prepared).toBe(waiting.people + waiting.addresses);
    expect(answer()).toBe(before);
  });
});
