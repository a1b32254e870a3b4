// A bounces file imported from the app (`people:import`, kind `bounces`: the Import bounces file button) into
// the local service: the report counts hard, soft and other rows; the app's own key then answers the hard
// bounces 520 (Verify an address), and a key provisioned before known bouncers existed gets them at start.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { provisionEmbeddedKey } from '../../../electron/core/embedded.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { openServiceDb } from '../../../service/store/db.js';
import { findActiveKey, setKeyKnownBouncers } from '../../../service/store/keys.js';
import type { ReferenceImport, ReferenceImportProgress } from '../../../shared/desktop/contract.js';
import { tempDir } from '../../helpers/service.js';
import { daysAgo } from '../../service/identity/fixture.js';

describe('importing bounces from the app', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const coreIn = (home: string): DesktopCore => {
    const core = createDesktopCore({
      home,
      secrets: new FileSecretStore(home),
      mode: 'browser',
      hasNativeDialogs: false,
      version: 'test',
    });
    cleanups.push(() => core.close());
    return core;
  };

  it('imports an export with a report, and Verify then reads a hard bounce 520', async () => {
    const home = tempDir();
    cleanups.push(() => home.remove());
    const core = coreIn(home.path);
    // Amazon SES bounce notifications, one recipient a row, of this month (the app's key counts a year).
    const path = join(home.path, 'ses-bounces.csv');
    writeFileSync(
      path,
      [
        'timestamp,emailAddress,bounceType,bounceSubType,diagnosticCode',
        `${daysAgo(9)},ses.hard3@example.net,Permanent,General,"smtp; 550 5.1.1 user unknown"`,
        `${daysAgo(8)},ses.soft1@example.net,Transient,MailboxFull,"smtp; 452 4.2.2 mailbox full"`,
        `${daysAgo(7)},ses.soft2@example.org,Undetermined,Undetermined,`,
        '',
      ].join('\n'),
    );
    const reply = await core.handle('people:import', { kind: 'bounces', path });
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const report = (reply as { value: ReferenceImport }).value;
    expect(report).toMatchObject({
      kind: 'bounces',
      fileName: 'ses-bounces.csv',
      status: 'done',
      rows: 3,
      imported: 1,
      rejected: 0,
      added: 1,
      bounces: { hard: 1, soft: 2, other: 0 },
    });
    const hard = await core.handle('verify:address', { email: 'ses.hard3@example.net' });
    expect(hard).toMatchObject({ ok: true, value: { status: 'invalid', statusCode: 520 } });
    const soft = await core.handle('verify:address', { email: 'ses.soft1@example.net' });
    expect(soft).toMatchObject({ ok: true, value: { statusCode: 10 } });

    const notBounces = join(home.path, 'contacts.csv');
    writeFileSync(notBounces, 'Email,Company\njo@example.com,Acme\n');
    const refused = await core.handle('people:import', { kind: 'bounces', path: notBounces });
    expect(refused).toMatchObject({ ok: false, error: { code: 'file-unreadable' } });
    expect(!refused.ok && refused.error.message).toMatch(/^No column says which rows are bounces/);
  });

  it('reports progress and cancels keeping the bounces written', async () => {
    const home = tempDir();
    cleanups.push(() => home.remove());
    const core = coreIn(home.path);
    const progress: ReferenceImportProgress[] = [];
    core.on((event, payload) => {
      if (event === 'people:import-progress') progress.push(payload as ReferenceImportProgress);
    });
    const path = join(home.path, 'cleaned_members.csv');
    const lines = ['Email Address,First Name,CLEAN_TIME'];
    const cleaned = daysAgo(30).replace('T', ' ').slice(0, 19);
    for (let i = 0; i < 300_000; i++) lines.push(`person${i}@example.com,P${i},${cleaned}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const running = core.handle('people:import', { kind: 'bounces', path });
    await expect
      .poll(() => progress.at(-1)?.imported ?? 0, { timeout: 60_000, interval: 20 })
      .toBeGreaterThan(0);
    expect(progress.at(-1)).toMatchObject({ kind: 'bounces', fileName: 'cleaned_members.csv' });
    expect(await core.handle('people:import-cancel', {})).toEqual({ ok: true, value: { cancelled: true } });
    const reply = await running;
    const report = (reply as { value: ReferenceImport }).value;
    expect(report).toMatchObject({ kind: 'bounces', status: 'cancelled' });
    expect(report.rows).toBeLessThan(300_000);
    const first = await core.handle('verify:address', { email: 'person0@example.com' });
    expect(first).toMatchObject({ ok: true, value: { statusCode: 520 } });
  });

  it('gives a key provisioned before known bouncers existed its known bouncers', () => {
    const dir = tempDir();
    cleanups.push(() => dir.remove());
    const db = openServiceDb(dir.path);
    cleanups.push(() => void db.close());
    const key = provisionEmbeddedKey(db, dir.path);
    expect(findActiveKey(db, key)?.knownBouncers).toBe(true);
    setKeyKnownBouncers(db, findActiveKey(db, key)!.id, false);
    expect(provisionEmbeddedKey(db, dir.path)).toBe(key);
    expect(findActiveKey(db, key)?.knownBouncers).toBe(true);
  });
});
