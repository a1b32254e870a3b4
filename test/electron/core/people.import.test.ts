// `people:import`: a people or activity file imported from the app into the local service's store, by the
// same import as `mailsieve data import` (in a worker thread): progress events while it reads, a report with
// the rejected rows by line, Cancel that keeps the rows written, one import at a time, a browser-mode upload
// removed once imported, and the people then found by `people:lookup`.
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import type { ReferenceImport, ReferenceImportProgress } from '../../../shared/desktop/contract.js';
import { tempDir } from '../../helpers/service.js';

/** A people file of `rows` people, one line each, at addresses person<i>@example.com. */
function peopleFile(path: string, rows: number): void {
  const lines = ['email,first name,last name,street,city,state,zip'];
  for (let i = 0; i < rows; i++)
    lines.push(
      `person${i}@example.com,First${i},Last${i},${i} Main St,Springfield,IL,62701-${String(i % 10_000).padStart(4, '0')}`,
    );
  writeFileSync(path, `${lines.join('\n')}\n`);
}

describe('people:import', () => {
  let home: ReturnType<typeof tempDir>;
  let core: DesktopCore;
  const progress: ReferenceImportProgress[] = [];

  beforeAll(() => {
    home = tempDir();
    core = createDesktopCore({
      home: home.path,
      secrets: new FileSecretStore(home.path),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
    core.on((event, payload) => {
      if (event === 'people:import-progress') progress.push(payload as ReferenceImportProgress);
    });
  });
  afterAll(async () => {
    await core?.close();
    home?.remove();
  });

  it('imports an uploaded file with a report by line, then the people answer', async () => {
    const staged = core.stagingPathFor('people.csv');
    writeFileSync(
      staged.path,
      'email,first name,last name,state,age\nann@example.com,Ann,Lee,TX,25-34\nbad,,,,\nbob@example.com,Bob,Roe,Narnia,\n',
    );
    core.registerStaged(staged.fileId, staged.path, 'people.csv');
    const reply = await core.handle('people:import', { kind: 'people', fileId: staged.fileId });
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const report = (reply as { value: ReferenceImport }).value;
    expect(report).toMatchObject({ kind: 'people', fileName: 'people.csv', status: 'done', rows: 3 });
    expect(report).toMatchObject({ imported: 1, rejected: 2, added: 1 });
    expect(report.errors).toEqual([
      { line: 3, message: "email 'bad' is not a valid address" },
      { line: 4, message: "state 'Narnia' is not a U.S. state or its USPS code" },
    ]);
    // The upload was the app's own copy: gone once imported.
    expect(existsSync(staged.path)).toBe(false);
    const ann = await core.handle('people:lookup', { by: 'email', email: 'ann@example.com' });
    expect(ann).toMatchObject({
      ok: true,
      value: { connection: 'embedded', isMatch: true, attributes: { age: '25-34' } },
    });
  });

  it('refuses a file that is not a people file in words, naming it by its name', async () => {
    const path = join(home.path, 'colours.csv');
    writeFileSync(path, 'colour,size\nred,9\n');
    const reply = await core.handle('people:import', { kind: 'people', path });
    expect(reply).toMatchObject({ ok: false, error: { code: 'file-unreadable' } });
    expect(!reply.ok && reply.error.message).toMatch(/^The header names no email column/);
    expect(JSON.stringify(reply)).not.toContain(home.path);
    const activity = await core.handle('people:import', { kind: 'activity', path });
    expect(!activity.ok && activity.error.message).toMatch(/^The header lacks email, source, event/);
  });

  it('reports progress, runs one import at a time, and cancels keeping the rows written', async () => {
    const path = join(home.path, 'many.csv');
    peopleFile(path, 300_000);
    progress.length = 0;
    const running = core.handle('people:import', { kind: 'people', path });
    // Cancel once the import has written a batch and moved on.
    await expect
      .poll(() => progress.at(-1)?.imported ?? 0, { timeout: 60_000, interval: 20 })
      .toBeGreaterThan(0);
    const second = await core.handle('people:import', { kind: 'activity', path });
    expect(second).toMatchObject({ ok: false, error: { code: 'busy' } });
    expect(await core.handle('people:import-cancel', {})).toEqual({ ok: true, value: { cancelled: true } });
    const reply = await running;
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const report = (reply as { value: ReferenceImport }).value;
    expect(report.status).toBe('cancelled');
    expect(report.imported).toBeGreaterThan(0);
    expect(report.rows).toBeLessThan(300_000);
    const last = progress.at(-1)!;
    expect(last).toMatchObject({ kind: 'people', fileName: 'many.csv', totalBytes: statSync(path).size });
    expect(last.bytesRead).toBeGreaterThan(0);
    expect(last.bytesRead).toBeLessThanOrEqual(last.totalBytes);
    // The first person, written before the cancel, stays.
    const first = await core.handle('people:lookup', { by: 'email', email: 'person0@example.com' });
    expect(first).toMatchObject({ ok: true, value: { isMatch: true } });
    expect(await core.handle('people:import-cancel', {})).toEqual({ ok: true, value: { cancelled: false } });
  });
});
