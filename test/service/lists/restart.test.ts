// Lists survive a service restart: one that was running when the service stopped is resumed from its stored
// input (never left pending), and one interrupted again and again is given up with Error.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { PART_ROWS } from '../../../service/lists/parts.js';
import { tempDir } from '../../helpers/service.js';
import { getResults, getStatus, lines, startListService, submit, waitForList } from './helpers.js';

const ROWS = 300_000;
const bigList = () =>
  `email,name\n${Array.from({ length: ROWS }, (_, i) => `person${i}@example.com,Person ${i}`).join('\n')}\n`;

/** Polls E8 until the list is being processed (some rows done, not all). */
async function waitUntilProcessing(base: string, key: string, id: number): Promise<ListResource> {
  for (;;) {
    const list = listResourceSchema.parse((await getStatus(base, key, id)).json());
    const service = list.services.email_validation!;
    if (list.status === 'Processing' && service.completed_count > 0) return list;
    if (list.status !== 'Pending' && list.status !== 'Processing')
      throw new Error(`list ended ${list.status} before the restart`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('lists across a restart', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('resumes a list that was running when `mailsieve serve` was killed', { timeout: 90_000 }, async () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const created = await runCli(['keys', 'create', '--data-dir', dir.path]);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    const first = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() =>
      first.child.exitCode === null && first.child.signalCode === null ? first.stop() : undefined,
    );
    const answer = await submit(first.match[1], key, bigList(), {
      as: 'text',
      query: { header: 'true', name: 'big.csv' },
    });
    expect(answer.status).toBe(202);
    const id = answer.json<{ list_id: number }>().list_id;
    await waitUntilProcessing(first.match[1], key, id);

    // Killed outright: no chance to tidy up.
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const listDir = join(dir.path, 'lists', String(id));
    // A part's results appear only whole (a temporary name, then renamed); no results file exists yet.
    const partsDir = join(listDir, 'parts');
    const killedParts = existsSync(partsDir) ? readdirSync(partsDir) : [];
    expect(killedParts.every((name) => /^1-\d+\.(out|out\.tmp)$/.test(name))).toBe(true);

    const second = await startCli(
      ['serve', '--port', '0', '--data-dir', dir.path],
      /listening on (http:\/\/\S+)/,
    );
    cleanups.push(() => second.stop());
    const base = second.match[1];
    const list = await waitForList(base, key, id, 60_000);
    expect(list).toMatchObject({ status: 'Results', records: ROWS });
    expect(list.services.email_validation).toMatchObject({
      input_count: ROWS,
      completed_count: ROWS,
      status: 'Completed',
    });
    const results = await getResults(base, key, id);
    const rows = lines(results.text);
    expect(rows).toHaveLength(ROWS + 1);
    expect(rows[ROWS]).toMatch(new RegExp(`^person${ROWS - 1}@example\\.com,Person ${ROWS - 1},unknown,10,`));
    // Only the second run's parts are left, each whole; its input went when it got its results (removed off
    // the request thread, so it may go just after the list reads Results).
    await expect.poll(() => readdirSync(listDir).sort(), { timeout: 5_000 }).toEqual(['parts']);
    const parts = readdirSync(partsDir);
    expect(parts.length).toBe(Math.ceil(ROWS / PART_ROWS));
    expect(parts.every((name) => /^2-\d+\.out$/.test(name))).toBe(true);
  });

  it(
    'resumes a list after the in-process service is closed and opened again',
    { timeout: 60_000 },
    async () => {
      const svc = await startListService();
      cleanups.push(() => svc.close());
      const key = svc.key();
      const answer = await submit(svc.url, key, bigList(), { as: 'text', query: { header: 'true' } });
      const id = answer.json<{ list_id: number }>().list_id;
      await waitUntilProcessing(svc.url, key, id);
      await svc.restart();
      const list = await waitForList(svc.url, key, id);
      expect(list).toMatchObject({ status: 'Results', records: ROWS });
    },
  );

  it('gives up with Error a list interrupted three times, and answers its reason', async () => {
    const svc = await startListService();
    cleanups.push(() => svc.close());
    const key = svc.key();
    const answer = await submit(svc.url, key, 'email\njane@example.com\n', { query: { header: 'true' } });
    const id = answer.json<{ list_id: number }>().list_id;
    await waitForList(svc.url, key, id);
    // The service removes a finished list's input off its thread, after the list reads Results: wait for
    // that removal, or it may remove the input written below.
    const inputPath = join(svc.dataDir, 'lists', String(id), 'input.csv');
    await expect.poll(() => existsSync(inputPath), { timeout: 5_000 }).toBe(false);
    // As the service leaves a list that was running when it stopped for the third time (its input still
    // stored: a list's input goes once it has its results).
    writeFileSync(inputPath, 'email\njane@example.com\n');
    svc.db
      .prepare(
        "UPDATE lists SET status = 'Processing', service_status = 'Processing', attempts = 3 WHERE id = ?",
      )
      .run(id);
    await svc.restart();
    const list = await waitForList(svc.url, key, id);
    expect(list.status).toBe('Error');
    expect(list.reason).toMatch(/interrupted 3 times.*submit the list again/);
    expect((await getResults(svc.url, key, id)).status).toBe(404);
  });
});
