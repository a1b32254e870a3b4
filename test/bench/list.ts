// `npm run bench -- list`: a generated 1,000,000-row, 7-column CSV of ~85 MB through `mailsieve clean` (the
// built CLI, on the embedded service), against two baselines measured in the same run on the same file:
// papaparse's streaming parse alone, and a naive script (papaparse + validator's isEmail + a Set + unparse).
// Each is a process of its own, timed from spawn to exit; peak memory is the process's maxRSS (worker threads
// included), written on exit by a preloaded module.
// And the desktop path (listDesktop.ts: the list added to the desktop core, run to its results, one export),
// timed the same way, in turn with clean as many times (BENCH_RUNS), its median against clean's. And known bouncers (issue 22): the same `clean` on a service folder holding bounces of
// one address in BENCH_BOUNCE_EVERY (default 10: ~100,000 bounces, listBounces.ts), interleaved with the plain
// runs; a list without bounces builds and looks up nothing.
// Targets (issues 3, 10 and 38): clean ≤ 0.5 × naive, clean ≤ 4 × parse, clean's peak RSS ≤ 300 MB, the
// desktop path ≤ 1.2 × clean. The median clean's stages (`clean --json`'s `stages_ms`) are printed against
// the parse.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureListData } from './listData.js';
import { ensureBounceData } from './listBounces.js';
import { fmt } from './util.js';
import { SERVICE_DB_FILE } from '../../service/store/db.js';
import { formatBytes } from '../../shared/bytes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const cli = join(root, 'bin', 'mailsieve.js');
const baselines = join(here, 'listBaselines.js');
const desktopPath = join(here, 'listDesktop.js');
const preload = pathToFileURL(join(here, 'listMaxRss.js')).href;

interface Run {
  readonly ms: number;
  readonly rssBytes: number;
  /** What the process printed on its standard output. */
  readonly stdout: string;
}

/** `clean --json`'s `stages_ms`: when each stage ended, in ms since the process started. */
type Stages = Record<'started' | 'uploaded' | 'processed' | 'exported' | 'done', number>;

/** The stages of a clean run, from the start-up to its exit: their names and lengths in ms. */
function stagesOf(run: Run): [string, number][] {
  const at = (JSON.parse(run.stdout) as { stages_ms: Stages }).stages_ms;
  return [
    ['start-up (Node, the CLI, the embedded service)', at.started],
    ['upload (E7, to the service on loopback)', at.uploaded - at.started],
    ['processing (pass 1 and pass 2 at the service)', at.processed - at.uploaded],
    ['download and export', at.exported - at.processed],
    ['history and summary', at.done - at.exported],
    ['exit', run.ms - at.done],
  ];
}

/** Runs `node ARGS` to completion; its wall time and peak RSS. Output goes to a log (stderr on failure). */
function timed(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const work = mkdtempSync(join(tmpdir(), 'mailsieve-bench-rss-'));
  const rssFile = join(work, 'rss');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', preload, ...args], {
      env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const ms = performance.now() - started;
      try {
        if (code !== 0)
          throw new Error(`node ${args.join(' ')} exited with ${code}:\n${output.slice(-2000)}`);
        resolve({ ms, rssBytes: Number(readFileSync(rssFile, 'utf8')), stdout });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });
  });
}

const median = (runs: readonly Run[]): Run => {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  return sorted[Math.floor(sorted.length / 2)];
};

export async function benchList(options: {
  runs: number;
  bounceEvery: number;
}): Promise<Record<string, number>> {
  const data = await ensureListData(join(root, 'test', 'bench', 'out'));
  console.log(`\nList pipeline: ${fmt(data.rows)} rows, ${formatBytes(data.bytes)} (${data.path})`);
  const scratch = mkdtempSync(join(tmpdir(), 'mailsieve-bench-list-'));
  try {
    const bounced = await ensureBounceData(data.path, join(scratch, 'bounces'), cli, options.bounceEvery);
    /** `clean` on a fresh service folder, or on a copy of the one holding the bounces. */
    const clean = async (withBounces = false): Promise<Run> => {
      const run = mkdtempSync(join(scratch, 'clean-'));
      if (withBounces) {
        mkdirSync(join(run, 'service'));
        copyFileSync(join(bounced.serviceDir, SERVICE_DB_FILE), join(run, 'service', SERVICE_DB_FILE));
      }
      try {
        // Its history in the run's folder (a clean keeps each run in the app home's history by default).
        return await timed(
          [
            cli,
            'clean',
            data.path,
            '--out',
            run,
            '--data-dir',
            join(run, 'service'),
            '--export',
            'clean',
            '--json',
          ],
          { MAILSIEVE_HOME: join(run, 'home') },
        );
      } finally {
        rmSync(run, { recursive: true, force: true });
      }
    };
    // Warm the page cache and the build once, unmeasured.
    await timed([baselines, 'parse', data.path]);
    const parseRuns: Run[] = [];
    const cleanRuns: Run[] = [];
    const bouncedRuns: Run[] = [];
    const desktopRuns: Run[] = [];
    // The desktop path in turn with clean, as many times, and its median against clean's: run once after the
    // naive script, its ratio to clean's median moved by a quarter between benches of one code (issue 38).
    const desktopOnce = async () => {
      const desktopRun = mkdtempSync(join(scratch, 'desktop-'));
      try {
        return await timed([desktopPath, data.path, desktopRun]);
      } finally {
        rmSync(desktopRun, { recursive: true, force: true });
      }
    };
    for (let i = 0; i < options.runs; i++) {
      parseRuns.push(await timed([baselines, 'parse', data.path]));
      cleanRuns.push(await clean());
      desktopRuns.push(await desktopOnce());
      bouncedRuns.push(await clean(true));
    }
    const naive = await timed([baselines, 'naive', data.path, join(scratch, 'naive.csv')]);
    const desktop = median(desktopRuns);
    const desktopPeak = Math.max(...desktopRuns.map((run) => run.rssBytes));
    const parse = median(parseRuns);
    const cleaned = median(cleanRuns);
    const peakRss = Math.max(...cleanRuns.map((run) => run.rssBytes));
    const vsNaive = cleaned.ms / naive.ms;
    const vsParse = cleaned.ms / parse.ms;
    const mb = (bytes: number) => `${fmt(bytes / 1024 / 1024)} MB`;
    const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
    console.log(
      `  papaparse parse alone   ${fmt(parse.ms)} ms   (runs: ${parseRuns.map((r) => fmt(r.ms)).join(', ')})   peak ${mb(parse.rssBytes)}`,
    );
    console.log(`  naive script            ${fmt(naive.ms)} ms   peak ${mb(naive.rssBytes)}`);
    console.log(
      `  mailsieve clean         ${fmt(cleaned.ms)} ms   (runs: ${cleanRuns.map((r) => fmt(r.ms)).join(', ')})   peak ${mb(peakRss)}`,
    );
    // The median run's stages (issue 38), each against the parse.
    for (const [name, ms] of stagesOf(cleaned))
      console.log(`    ${name.padEnd(48)} ${fmt(ms).padStart(6)} ms   ${fmt(ms / parse.ms, 2)} × the parse`);
    console.log(`  clean / naive           ${fmt(vsNaive, 2)}   (target ≤ 0.5)  ${verdict(vsNaive <= 0.5)}`);
    console.log(
      `  desktop path            ${fmt(desktop.ms)} ms   (runs: ${desktopRuns.map((r) => fmt(r.ms)).join(', ')})   peak ${mb(desktopPeak)}`,
    );
    console.log(`  clean / parse           ${fmt(vsParse, 2)}   (target ≤ 4)    ${verdict(vsParse <= 4)}`);
    console.log(
      `  clean peak RSS          ${mb(peakRss)}   (target ≤ 300 MB)  ${verdict(peakRss <= 300 * 1024 * 1024)}`,
    );
    const vsClean = desktop.ms / cleaned.ms;
    console.log(`  desktop / clean         ${fmt(vsClean, 2)}   (target ≤ 1.2)  ${verdict(vsClean <= 1.2)}`);
    const withBounces = median(bouncedRuns);
    const bouncedVsClean = withBounces.ms / cleaned.ms;
    console.log(
      `  bounces                 ${fmt(bounced.bounceRows)} rows (${fmt(bounced.hard)} hard) imported in ${fmt(bounced.importMs)} ms; ` +
        `${fmt(bounced.counting)} count today, their set built in ${fmt(bounced.setMs)} ms`,
    );
    console.log(
      `  clean with bounces      ${fmt(withBounces.ms)} ms   (runs: ${bouncedRuns.map((r) => fmt(r.ms)).join(', ')})   peak ${mb(Math.max(...bouncedRuns.map((r) => r.rssBytes)))}`,
    );
    console.log(`  with / without bounces  ${fmt(bouncedVsClean, 2)}`);
    return {
      rows: data.rows,
      bytes: data.bytes,
      parse_ms: parse.ms,
      naive_ms: naive.ms,
      clean_ms: cleaned.ms,
      clean_vs_naive: vsNaive,
      clean_vs_parse: vsParse,
      clean_peak_rss_mb: peakRss / 1024 / 1024,
      naive_peak_rss_mb: naive.rssBytes / 1024 / 1024,
      desktop_ms: desktop.ms,
      desktop_vs_clean: vsClean,
      desktop_peak_rss_mb: desktopPeak / 1024 / 1024,
      bounces: bounced.bounceRows,
      bounces_counting: bounced.counting,
      bounce_set_ms: bounced.setMs,
      clean_with_bounces_ms: withBounces.ms,
      with_vs_without_bounces: bouncedVsClean,
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
