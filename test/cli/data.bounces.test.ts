// `mailsieve data import bounces`, `data status`, `data clear [bounces]` and `keys create --known-bouncers`
// through the built CLI on real files; then `mailsieve verify` (the embedded service, whose key has known
// bouncers) reads an imported hard bounce 520 "Bounced before".
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempFolderPerTest } from '../helpers/folders.js';
import { BOUNCE_FIXTURES } from '../service/identity/bounces.fixtures.js';
import { writeCsv } from '../service/identity/fixture.js';

describe('mailsieve data import bounces', () => {
  const folder = tempFolderPerTest();

  it('imports an export, says what it read, counts it in data status, and clears it', async () => {
    const svc = join(folder(), 'svc');
    const postmark = await runCli([
      'data',
      'import',
      'bounces',
      join(BOUNCE_FIXTURES, 'postmark-bounces.csv'),
      '--data-dir',
      svc,
    ]);
    expect(postmark.code, postmark.stderr).toBe(0);
    expect(postmark.stdout).toMatch(
      /^Imported 2 of 5 rows from postmark-bounces\.csv \(hard bounces: 2 addresses added, 0 updated; ignored: 2 soft bounces, 1 row not a bounce\) in [\d.]+ s\.\n/,
    );
    expect(postmark.stdout).toContain(
      "Note: Read addresses from 'Email'; dates from 'BouncedAt'; hard or soft from 'Type', then 'Description', then 'Details'.",
    );
    const plain = await runCli([
      'data',
      'import',
      'bounces',
      join(BOUNCE_FIXTURES, 'plain-list.txt'),
      '--data-dir',
      svc,
      '--json',
    ]);
    expect(JSON.parse(plain.stdout)).toMatchObject({
      kind: 'bounces',
      rows: 3,
      imported: 3,
      rejected: 0,
      added: 3,
      bounces: { hard: 3, soft: 0, other: 0, undated: 3 },
    });

    const status = await runCli(['data', 'status', '--data-dir', svc]);
    expect(status.stdout).toContain(
      'Bounces: 5 addresses with a hard bounce, from 8 rows read (5 hard; ignored: 2 soft bounces, 1 row not a bounce; 0 rejected).',
    );
    expect(status.stdout).toMatch(
      / {2}#1 {2}bounces {2}postmark-bounces\.csv {2}5 rows: 2 hard, 2 soft, 1 other {2}/,
    );
    const json = JSON.parse((await runCli(['data', 'status', '--data-dir', svc, '--json'])).stdout) as {
      bounces: object;
    };
    expect(json.bounces).toMatchObject({ addresses: 5, rows: 8, hard: 5, soft: 2, other: 1, rejected: 0 });

    // The app's own key (the embedded service of `verify`) has known bouncers, for a year: the plain list's
    // bounces count from their import.
    const verified = await runCli([
      'verify',
      '--data-dir',
      svc,
      'pl.hard1@example.com',
      'pm.soft1@example.org',
    ]);
    expect(verified.stdout).toContain('pl.hard1@example.com  invalid  520 Bounced before');
    expect(verified.stdout).toContain('pm.soft1@example.org  valid  10 Syntax OK');

    const refused = await runCli(['data', 'clear', 'bounces', '--data-dir', svc]);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe('mailsieve: data clear bounces deletes every imported bounce: add --yes.\n');
    const people = writeCsv(folder(), 'people.csv', [
      ['email', 'first name'],
      ['ann@example.com', 'Ann'],
    ]);
    expect((await runCli(['data', 'import', 'people', people, '--data-dir', svc])).code).toBe(0);
    const cleared = await runCli(['data', 'clear', 'bounces', '--yes', '--data-dir', svc]);
    expect(cleared).toMatchObject({ code: 0, stdout: 'Bounces cleared.\n' });
    const after = JSON.parse((await runCli(['data', 'status', '--data-dir', svc, '--json'])).stdout) as {
      people: number;
      bounces: object;
    };
    expect(after.people).toBe(1);
    expect(after.bounces).toMatchObject({ addresses: 0, rows: 0, imports: [] });
    const wrong = await runCli(['data', 'clear', 'people', '--yes', '--data-dir', svc]);
    expect(wrong.stderr).toBe("mailsieve: data clear takes all (the default) or bounces; got 'people'.\n");

    await runCli(['data', 'import', 'bounces', join(BOUNCE_FIXTURES, 'plain-list.txt'), '--data-dir', svc]);
    expect((await runCli(['data', 'clear', '--yes', '--data-dir', svc])).code).toBe(0);
    const empty = JSON.parse((await runCli(['data', 'status', '--data-dir', svc, '--json'])).stdout) as {
      people: number;
      bounces: object;
    };
    expect(empty).toMatchObject({ people: 0, bounces: { addresses: 0 } });
  });

  it('exits with one line for a file that is not a bounce export, and for soft bounces only reads them', async () => {
    const dir = folder();
    const svc = join(dir, 'svc');
    const contacts = writeCsv(dir, 'contacts.csv', [
      ['Email', 'First Name', 'Company'],
      ['jo@example.com', 'Jo', 'Acme'],
    ]);
    const refused = await runCli(['data', 'import', 'bounces', contacts, '--data-dir', svc]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^mailsieve: No column says which rows are bounces/);
    const soft = writeCsv(dir, 'soft.csv', [
      ['email', 'status'],
      ['jo@example.com', '4.2.2'],
    ]);
    const read = await runCli(['data', 'import', 'bounces', soft, '--data-dir', svc]);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/^Imported 0 of 1 row from soft\.csv \(hard bounces: 0 addresses added/);
    writeFileSync(join(dir, 'bad.csv'), 'email,status\nnot-an-address,5.1.1\n');
    const bad = await runCli(['data', 'import', 'bounces', join(dir, 'bad.csv'), '--data-dir', svc]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('mailsieve: Nothing imported: all 1 rows of bad.csv were rejected.');
  });

  it('keys create --known-bouncers takes a max age; the max age alone is refused', async () => {
    const svc = join(folder(), 'svc');
    const made = await runCli([
      'keys',
      'create',
      '--known-bouncers',
      '--bounce-max-age-days',
      '90',
      '--data-dir',
      svc,
    ]);
    expect(made.code, made.stderr).toBe(0);
    await runCli(['keys', 'create', '--data-dir', svc]);
    const listed = (await runCli(['keys', 'list', '--json', '--data-dir', svc])).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as object);
    expect(listed).toMatchObject([
      { known_bouncers: true, bounce_max_age_days: 90 },
      { known_bouncers: false, bounce_max_age_days: 365 },
    ]);
    expect((await runCli(['keys', 'list', '--data-dir', svc])).stdout).toContain('known bouncers (90 days)');
    const alone = await runCli(['keys', 'create', '--bounce-max-age-days', '90', '--data-dir', svc]);
    expect(alone).toMatchObject({
      code: 1,
      stderr: 'mailsieve: --bounce-max-age-days is for a key with --known-bouncers.\n',
    });
    const zero = await runCli([
      'keys',
      'create',
      '--known-bouncers',
      '--bounce-max-age-days',
      '0',
      '--data-dir',
      svc,
    ]);
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/^mailsieve: --bounce-max-age-days/);
  });
});
