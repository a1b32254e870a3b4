// `npm run bench -- outcomes` (issue 37): a 1,000,000-row job measured against a 100,000-row bounce export by
// the built CLI (`mailsieve outcomes import FILE --job 1 --json`: the export read through the bounces import,
// its hard bounces stored as known bouncers, the job's results and evidence streamed once, the report kept),
// its wall time and peak RSS (the whole process), against a baseline measured in the same run: a bare
// streaming read of the same three files. It also says what the evidence of every verdict costs on disk for
// that job (bytes per row of the job's explain.csv). Targets: under 10 s and under 300 MB.
//
// The job is synthetic and deterministic (test/bench/out/outcomes/, reused while its generator version and row
// count match): a results file as the list endpoint writes it (valid 50, accept-all 45, unknown 5, invalid
// 400, syntax-only 10, duplicates), mailbox providers by their MX hosts (Google, Microsoft, Yahoo, Apple, a
// Proofpoint gateway, company servers), its explain.csv with the evidence columns, and a SendGrid-shaped export
// naming one address in ten (nine in ten hard).
import { spawn } from 'node:child_process';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  HISTORY_DB_FILE,
  insertJob,
  openHistoryDb,
  setJobResults,
  setJobStatus,
} from '../../electron/core/history/db.js';
import { setJobChecks } from '../../electron/core/history/jobVersions.js';
import { keepEvidence, keptEvidencePathOf } from '../../electron/core/results/evidence.js';
import { prng } from './listData.js';
import { fmt } from './util.js';

const GENERATOR_VERSION = 1;
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const cli = join(root, 'bin', 'mailsieve.js');
const preload = pathToFileURL(join(here, 'listMaxRss.js')).href;

const HEADER =
  'email,first_name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';
const EXPLAIN_HEADER = 'Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At';

/** Mailbox domains and the MX host that answers for each (the provider families of the report). */
const PROVIDERS: readonly (readonly [string, string])[] = [
  ['gmail.com', 'gmail-smtp-in.l.google.com'],
  ['outlook.com', 'outlook-com.olc.protection.outlook.com'],
  ['yahoo.com', 'mta5.am0.yahoodns.net'],
  ['icloud.com', 'mx01.mail.icloud.com'],
  ['bigbank.example', 'mx0a-001.pphosted.com'],
];

export interface OutcomesData {
  readonly dir: string;
  readonly results: string;
  readonly explain: string;
  readonly bounces: string;
  readonly rows: number;
  readonly bounceRows: number;
}

async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  const temporary = `${path}.tmp`;
  const out = createWriteStream(temporary);
  let buffer = '';
  for (const line of lines) {
    buffer += `${line}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.write(buffer);
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  renameSync(temporary, path);
}

export async function ensureOutcomesData(
  outDir: string,
  rows: number,
  bounceEvery: number,
): Promise<OutcomesData> {
  const dir = join(outDir, 'outcomes');
  const data: OutcomesData = {
    dir,
    results: join(dir, `results-${rows}.csv`),
    explain: join(dir, `explain-${rows}.csv`),
    bounces: join(dir, `bounces-${rows}-${bounceEvery}.csv`),
    rows,
    bounceRows: Math.floor(rows / bounceEvery),
  };
  const stamp = join(dir, 'stamp.json');
  const wanted = JSON.stringify({ version: GENERATOR_VERSION, rows, bounceEvery });
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return data;
  mkdirSync(dir, { recursive: true });
  const random = prng(37);
  const emails: string[] = new Array<string>(rows);
  const codes = new Int16Array(rows);
  const hosts: string[] = new Array<string>(rows);
  for (let i = 0; i < rows; i++) {
    const r = random();
    const [domain, host] =
      r < 0.5
        ? PROVIDERS[Math.floor(random() * PROVIDERS.length)]
        : [`company${Math.floor(random() * 20_000)}.example`, ''];
    // One row in fifty repeats an earlier address (a duplicate).
    emails[i] = i > 0 && random() < 0.02 ? emails[Math.floor(random() * i)] : `person.${i}@${domain}`;
    const c = random();
    codes[i] = c < 0.7 ? 50 : c < 0.8 ? 45 : c < 0.85 ? 5 : c < 0.95 ? 400 : 10;
    hosts[i] = host || `mx.${domain}`;
  }
  const seen = new Set<string>();
  function* resultLines() {
    yield HEADER;
    for (let i = 0; i < rows; i++) {
      const code = codes[i];
      const status = code === 50 || code === 45 ? 'valid' : code === 400 ? 'invalid' : 'unknown';
      const isDuplicate = seen.has(emails[i]) || (seen.add(emails[i]), false);
      yield `${emails[i]},P${i},${status},${code},,,${isDuplicate ? 'true' : ''},${status === 'valid' ? emails[i] : ''}`;
    }
  }
  await writeLines(data.results, resultLines());
  function* explainLines() {
    yield EXPLAIN_HEADER;
    const at = Date.parse('2026-11-01T08:00:00Z');
    for (let i = 0; i < rows; i++) {
      const code = codes[i];
      const host = hosts[i];
      const reply =
        code === 400 ? '550 5.1.1 User unknown' : code === 5 ? '451 4.7.1 Try again later' : '250 2.1.5 OK';
      const checkedAt = new Date(at + i * 37).toISOString();
      yield code === 10
        ? `${i + 1},${emails[i]},10,offline,decided offline: Syntax OK,syntax,,,,${checkedAt}`
        : `${i + 1},${emails[i]},${code},smtp,${host}: ${reply},smtp,${host},${reply},192.0.2.10,${checkedAt}`;
    }
  }
  await writeLines(data.explain, explainLines());
  function* bounceLines() {
    yield 'email,created,status,reason';
    const nowS = Math.floor(Date.parse('2026-11-20T00:00:00Z') / 1000);
    for (let i = 0; i < rows; i += bounceEvery) {
      const isHard = random() < 0.9;
      yield `${emails[i].toUpperCase()},${nowS - Math.floor(random() * 10 * 86_400)},${isHard ? '5.1.1' : '4.2.2'},"${isHard ? '550 5.1.1 no such user' : '452 4.2.2 mailbox full'}"`;
    }
  }
  await writeLines(data.bounces, bounceLines());
  writeFileSync(stamp, wanted);
  return data;
}

/** A bare streaming read of the files (the baseline): what reading them costs before any work on them. */
async function bareRead(paths: readonly string[]): Promise<number> {
  const started = performance.now();
  for (const path of paths) {
    let lines = 0;
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 16 }) as AsyncIterable<Buffer>) {
      for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
    }
    if (lines === 0) throw new Error(`${path} is empty`);
  }
  return performance.now() - started;
}

function timedCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; rssBytes: number; stdout: string }> {
  const work = mkdtempSync(join(tmpdir(), 'mailsieve-bench-rss-'));
  const rssFile = join(work, 'rss');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', preload, cli, ...args], {
      env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      try {
        if (code !== 0)
          throw new Error(`mailsieve ${args.join(' ')} exited with ${code}:\n${stderr.slice(-2000)}`);
        resolve({ ms, rssBytes: Number(readFileSync(rssFile, 'utf8')), stdout });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  });
}

export async function benchOutcomes(options: {
  rows: number;
  bounceEvery: number;
  runs: number;
}): Promise<Record<string, number>> {
  const out = join(root, 'test', 'bench', 'out');
  const data = await ensureOutcomesData(out, options.rows, options.bounceEvery);
  const home = mkdtempSync(join(tmpdir(), 'mailsieve-bench-outcomes-'));
  try {
    const db = openHistoryDb(join(home, HISTORY_DB_FILE));
    const id = insertJob(db, {
      fileName: 'list.csv',
      filePath: data.results,
      uploadName: 'list.csv',
      uploadHeader: true,
      fileSize: statSync(data.results).size,
      fileSha256: null,
      fileFormat: 'csv',
      fileEncoding: null,
      mapping: { delimiter: ',', header: true, roles: ['email', 'first_name'] },
      connectionKind: 'embedded',
      connectionUrl: null,
      options: { reportOnly: false, split: false, services: ['email_validation'] },
    });
    setJobResults(db, id, { path: data.results, name: 'list-results.csv', duplicates: null });
    setJobChecks(db, id, { level: 'smtp', reason: 'bench' });
    setJobStatus(db, id, 'completed', null);
    db.close();
    // The job's evidence as the app keeps it (keepEvidence: explain.csv.gz in blocks).
    const kept = keptEvidencePathOf(join(home, 'results'), id);
    mkdirSync(dirname(kept), { recursive: true });
    const keepStarted = performance.now();
    const evidenceBytes = await keepEvidence(createReadStream(data.explain), kept);
    const keepMs = performance.now() - keepStarted;
    const csvBytes = statSync(data.explain).size;
    const runs: { ms: number; rssBytes: number; bareMs: number }[] = [];
    let report: { sent: number; hardBounced: number; missedTotal: number } | undefined;
    for (let run = 0; run < options.runs; run++) {
      const bareMs = await bareRead([data.bounces, data.results, data.explain]);
      const timed = await timedCli(
        [
          'outcomes',
          'import',
          data.bounces,
          '--job',
          String(id),
          '--json',
          '--data-dir',
          join(home, 'service'),
        ],
        { MAILSIEVE_HOME: home },
      );
      report = JSON.parse(timed.stdout) as typeof report;
      runs.push({ ...timed, bareMs });
      console.log(
        `outcomes: run ${run + 1}: import + report ${fmt(timed.ms)} ms, peak RSS ${fmt(timed.rssBytes / 2 ** 20)} MB; bare read ${fmt(bareMs)} ms`,
      );
    }
    const median = <T>(values: T[], of: (v: T) => number) => {
      const sorted = values.map(of).sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)];
    };
    const ms = median(runs, (r) => r.ms);
    const rss = median(runs, (r) => r.rssBytes);
    const bare = median(runs, (r) => r.bareMs);
    const perRow = evidenceBytes / data.rows;
    console.log(
      `outcomes: ${fmt(data.rows)}-row job, ${fmt(data.bounceRows)}-row bounce export: import + report ${fmt(ms)} ms median ` +
        `(target < 10,000), peak RSS ${fmt(rss / 2 ** 20)} MB (target < 300); ${fmt(ms / bare, 1)}× a bare read of the three files ` +
        `(${fmt(bare)} ms). Report: ${fmt(report!.sent)} mailed, ${fmt(report!.hardBounced)} hard-bounced, ${fmt(report!.missedTotal)} verdicts missed.`,
    );
    console.log(
      `outcomes: evidence kept per row: ${fmt(perRow, 1)} bytes (the job's explain.csv.gz: ${fmt(evidenceBytes / 2 ** 20, 1)} MB for ${fmt(data.rows)} rows, kept in ${fmt(keepMs)} ms; the service's explain CSV: ${fmt(csvBytes / data.rows, 1)} bytes a row)`,
    );
    return {
      importMs: ms,
      peakRssMB: rss / 2 ** 20,
      bareReadMs: bare,
      ratioToBareRead: ms / bare,
      evidenceBytesPerRow: perRow,
      evidenceMB: evidenceBytes / 2 ** 20,
      evidenceKeepMs: keepMs,
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
