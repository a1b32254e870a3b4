// A service whose checks level is still being decided (the embedded service of `mailsieve clean` runs
// Automatic's preflight while the list uploads): lists wait in the queue until the decision is made, then run.
import { afterEach, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../../shared/api/list.js';
import { getStatus, startListService, submit, waitForList, type ListService } from './helpers.js';

describe('lists of a service still deciding its checks level', () => {
  let svc: ListService | undefined;
  afterEach(async () => {
    await svc?.close();
    svc = undefined;
  });

  it('wait until the decision is made, then run', { timeout: 60_000 }, async () => {
    let decide = () => {};
    const ready = new Promise<void>((resolve) => (decide = resolve));
    svc = await startListService({ ready });
    const key = svc.key();
    const answer = await submit(svc.url, key, 'email\nann@example.com\nbob@example.org\n', {
      fileName: 'people.csv',
      query: { header: 'true' },
    });
    expect(answer.status).toBe(202);
    const id = answer.json<{ list_id: number }>().list_id;
    // Well past the time such a list takes to run: it has not started.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const waiting = listResourceSchema.parse((await getStatus(svc.url, key, id)).json());
    expect(waiting.status).toBe('Pending');
    decide();
    const done = await waitForList(svc.url, key, id);
    expect(done.status).toBe('Results');
    expect(done.records).toBe(2);
  });
});
