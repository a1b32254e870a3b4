// `mailsieve clean` (the built CLI), on the embedded service and against a `mailsieve serve` at a base URL.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'lists');
const APPENDED = 'Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';

/** Rows of a text file without its last line break. */
const rowsOf = (path: string) =>
  readFileSync(path, 'utf8')
    .replace(/\r?\n$/, '')
    .split(/\r?\n/);

describe('mailsieve clean', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const workspace = () => {
    const dir = tempDir('mailsieve-clean-');
    cleanups.push(() => dir.remove());
    return dir.path;
  };

  it('detects the layout, says so, and writes the results and every export next to the input', async () => {
    const dir = workspace();
    const input = join(dir, 'people.csv');
    copyFileSync(join(FIXTURES, 'good', 'people.csv'), input);
    const result = await runCli(
      ['clean', input, '--export', 'safe', '--export', 'invalid', '--export', 'clean,all'],
      { MAILSIEVE_HOME: join(dir, 'home') },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "people.csv: delimiter comma (detected), a header row (detected), email in column 1 'email' (detected)",
    );
    expect(result.stdout).toMatch(/List 1 \(people\.csv\): 5 records, status Results/);
    // The local service's key answers in safe_to_send mode: its words (shared/vocabulary.ts).
    expect(result.stdout).toMatch(/statuses: +invalid 1, trap 1, unknown 1, corrected 2/);
    expect(result.stdout).toMatch(/ 10 {2}Syntax OK +3/);
    expect(result.stdout).toMatch(/525 {2}Disposable \(throw-away\) address +1/);
    expect(result.stdout).toMatch(/domain types: +disposable 1, not known 4/);
    expect(result.stdout).toMatch(/role accounts: 1/);
    expect(result.stdout).toMatch(/duplicates: +2 rows/);
    expect(result.stdout).toContain('checked offline: syntax only — good addresses read unknown (code 10)');
    // Plain progress lines when stderr is not a terminal; never a stack trace.
    expect(result.stderr).toMatch(/uploading: 100%/);
    expect(result.stderr).toMatch(/processing: 100% \(5 of 5 records\)/);

    const results = join(dir, 'people-1-Validation.csv');
    expect(result.stdout).toContain(`Results: ${results}`);
    const rows = rowsOf(results);
    expect(rows[0]).toBe(`email,first name,last name,street,city,${APPENDED}`);
    expect(rows).toHaveLength(6);
    // Exports for import: the address to mail in the email column (the correction for corrected rows, the
    // original in `Original Email`); safe and clean remove duplicates (the same corrected address) by default.
    const exported = (kind: string) => rowsOf(join(dir, `people-${kind}.csv`));
    const header = `${rows[0]},Original Email`;
    /** A corrected row as exported: its `Valid Email` in the email column, the original at the end. */
    const corrected = (row: string) => {
      const [original] = row.split(',');
      const validEmail = row.slice(row.lastIndexOf(',') + 1);
      return `${validEmail}${row.slice(original.length)},${original}`;
    };
    expect(rows[1]).toMatch(/^jane\.doe@gmial\.com,.*,corrected,.*,jane\.doe@gmail\.com$/);
    const jane = corrected(rows[1]);
    expect(exported('safe')).toEqual([header, jane]);
    expect(exported('invalid')).toEqual([header, `${rows[3]},`]);
    expect(exported('clean')).toEqual([header, jane, `${rows[2]},`]); // all but invalid and risky, once each
    expect(exported('all')).toEqual(rows); // the results as they are, without export choices
    expect(result.stdout).toMatch(/Export safe +\S+people-safe\.csv \(1 rows; left out 1 duplicate\)/);
  });

  it('prints one JSON object with --json, and writes into --out', async () => {
    const dir = workspace();
    const out = join(dir, 'out');
    const result = await runCli(
      ['clean', join(FIXTURES, 'good', 'addresses.txt'), '--out', out, '--json', '--export', 'clean'],
      {
        MAILSIEVE_HOME: join(dir, 'home'),
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const outcome = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(outcome).toMatchObject({
      list: { status: 'Results', records: 4, name: 'addresses.txt' },
      detected: { delimiter: '\t', header: false, email_column: 1, column_names: ['Email'] },
      results: join(out, 'addresses-1-Validation.txt'),
      duplicates: 2,
      // All but the invalid one, the repeated jane.doe@example.com once.
      exports: [{ kind: 'clean', path: join(out, 'addresses-clean.txt'), rows: 2 }],
      offline: true,
    });
    // When each stage ended, in order (the list benchmark reports them): ms since the process started.
    const stages = outcome.stages_ms as Record<string, number>;
    const order = ['started', 'uploaded', 'processed', 'exported', 'done'];
    expect(Object.keys(stages).sort()).toEqual([...order].sort());
    expect(stages.started).toBeGreaterThan(0);
    for (let i = 1; i < order.length; i++)
      expect(stages[order[i]]).toBeGreaterThanOrEqual(stages[order[i - 1]]);
    expect(result.stderr).toMatch(
      /addresses\.txt: delimiter tab \(from the file name\), no header row \(detected\)/,
    );
    expect(rowsOf(join(out, 'addresses-1-Validation.txt'))[0]).toBe(
      `Email\t${APPENDED.replaceAll(',', '\t')}`,
    );
  });

  it('follows --no-header, --delimiter and --email-column, and says they were given', async () => {
    const dir = workspace();
    const input = join(dir, 'semi.csv');
    writeFileSync(input, 'Jane;jane@example.com;x@example.org\nJohn;john@example.org;y@example.org\n');
    const result = await runCli(
      ['clean', input, '--no-header', '--delimiter', 'semicolon', '--email-column', '2'],
      {
        MAILSIEVE_HOME: join(dir, 'home'),
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'delimiter semicolon (given), no header row (given), email in column 2 (given)',
    );
    expect(rowsOf(join(dir, 'semi-1-Validation.csv'))).toEqual([
      `Column 1;Email;Column 3;${APPENDED.replaceAll(',', ';')}`,
      'Jane;jane@example.com;x@example.org;unknown;10;;;;',
      'John;john@example.org;y@example.org;unknown;10;org;;;',
    ]);
  });

  it('cleans a zip into a zipped result, with the exports as text', async () => {
    const dir = workspace();
    const input = join(dir, 'batch.zip');
    writeFileSync(input, zipSync({ 'inside.csv': strToU8('email,name\njane@example.com,Jane\nbad,Bad\n') }));
    const result = await runCli(['clean', input, '--export', 'invalid'], {
      MAILSIEVE_HOME: join(dir, 'home'),
    });
    expect(result.code, result.stderr).toBe(0);
    const zipped = unzipSync(readFileSync(join(dir, 'batch-1-Validation.zip')));
    expect(Object.keys(zipped)).toEqual(['inside-1-Validation.csv']);
    expect(rowsOf(join(dir, 'batch-invalid.csv'))).toEqual([
      `email,name,${APPENDED},Original Email`,
      'bad,Bad,invalid,150,,,,,',
    ]);
  });

  it('fails with one line and a non-zero exit, never a stack trace', async () => {
    const dir = workspace();
    const home = { MAILSIEVE_HOME: join(dir, 'home') };
    const cases: [string[], RegExp][] = [
      [['clean', join(dir, 'missing.csv')], /^mailsieve: No such file: .*missing\.csv$/],
      [
        ['clean', join(FIXTURES, 'broken', 'ragged-rows.csv')],
        /^mailsieve: The service could not read the list: Line 3 has 2 fields where the header has 3/,
      ],
      [
        ['clean', join(FIXTURES, 'broken', 'two-email-columns.csv')],
        /^mailsieve: Cannot clean two-email-columns\.csv: More than one column holds email addresses .*give --email-column/,
      ],
      [
        ['clean', join(FIXTURES, 'good', 'people.csv'), '--export', 'best'],
        /^mailsieve: --export takes safe, invalid, clean, all, zip; got 'best'\.$/,
      ],
      [
        ['clean', join(FIXTURES, 'good', 'people.csv'), '--api-key', 'k'],
        /^mailsieve: --api-key goes with --base-url\.$/,
      ],
      [
        ['clean', join(FIXTURES, 'broken', 'spreadsheet.xlsx')],
        /^mailsieve: “spreadsheet\.xlsx” has no sheet\.$/,
      ],
      [
        ['clean', join(FIXTURES, 'good', 'people.csv'), '--export', 'clean', '--export-format', 'pdf'],
        /^mailsieve: --export-format takes csv, csv-excel, tsv, xlsx; got 'pdf'\.$/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, home);
      expect(result.code, args.join(' ')).not.toBe(0);
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('mailsieve:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    expect(existsSync(join(FIXTURES, 'broken', 'ragged-rows-1-Validation.csv'))).toBe(false);
  }, 90_000);

  it(
    'works against a service at a base URL, polling it no faster than every 5 seconds',
    { timeout: 60_000 },
    async () => {
      const dir = workspace();
      const svcDir = join(dir, 'svc');
      const key = (await runCli(['keys', 'create', '--data-dir', svcDir, '--corrections'])).stdout.trim();
      const server = await startCli(
        ['serve', '--port', '0', '--data-dir', svcDir],
        /listening on (http:\/\/\S+)/,
      );
      cleanups.push(() => server.stop());
      const target = new URL(server.match[1]);
      // A recording proxy in front of the service: when did the CLI ask for the list's status?
      const polls: number[] = [];
      const proxy: Server = createServer((req, res) => {
        if (req.method === 'GET' && /^\/v5\/list\/\d+$/.test(req.url ?? '')) polls.push(Date.now());
        const upstream = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => new Promise((resolve) => proxy.close(resolve)));
      const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

      const input = join(dir, 'many.csv');
      writeFileSync(
        input,
        `email,name\n${Array.from({ length: 60_000 }, (_, i) => `p${i}@example.com,P ${i}`).join('\n')}\n`,
      );
      const result = await runCli(['clean', input, '--base-url', base, '--export', 'safe', '--explain'], {
        MAILSIEVE_API_KEY: key,
        MAILSIEVE_HOME: join(dir, 'home'),
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/60,000 records, status Results/);
      expect(result.stdout).not.toContain('checked offline'); // a remote service: no claim about how it checked
      expect(result.stdout).toContain('Why, per row: none written — the provider gave no explanations');
      expect(result.stdout + result.stderr).not.toContain(key);
      expect(polls.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < polls.length; i++) expect(polls[i] - polls[i - 1]).toBeGreaterThanOrEqual(4_900);
      expect(rowsOf(join(dir, 'many-safe.csv'))).toHaveLength(1); // nothing is safe to mail offline: the header only
    },
  );
});
