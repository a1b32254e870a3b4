// When a temporary's writer has stopped (electron/core/jobs/outputFolder.ts): told by the lock the writer holds
// on the folder, which the system drops with the process, not by whether its process id answers. The writers
// are real processes (the built module, dist/), killed with SIGKILL.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdOutputFolder, removeStaleTemporaries } from '../../../electron/core/jobs/outputFolder.js';
import { temporaryPathOf } from '../../../electron/core/jobs/outputs.js';
import { answers, startKillable, type KillableProcess } from '../../helpers/killable.js';
import { tempDir } from '../../helpers/service.js';

const DIST_JOBS = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'dist',
  'electron',
  'core',
  'jobs',
);

/** A process that holds `dir` and writes a temporary in it, as the engine does during a download. */
async function startWriter(scriptDir: string, dir: string): Promise<KillableProcess> {
  const script = join(scriptDir, 'writer.mjs');
  writeFileSync(
    script,
    `import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { holdOutputFolder } from ${JSON.stringify(pathToFileURL(join(DIST_JOBS, 'outputFolder.js')).href)};
import { temporaryPathOf } from ${JSON.stringify(pathToFileURL(join(DIST_JOBS, 'outputs.js')).href)};
const dir = process.argv[2];
holdOutputFolder(dir);
writeFileSync(temporaryPathOf(join(dir, 'results.csv')), 'half a file');
console.log('ready');
setInterval(() => undefined, 1 << 30);
`,
  );
  const writer = await startKillable(script, [dir]);
  for await (const line of writer.lines) if (line === 'ready') return writer;
  throw new Error('The writer stopped before it was ready');
}

const sweepUntilRemoved = async (dir: string): Promise<string[]> => {
  // The system drops a killed process's lock as its files close, a moment after the kill.
  for (let i = 0; i < 500; i++) {
    const removed = removeStaleTemporaries(dir);
    if (removed.length > 0) return removed.sort();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return [];
};

describe('stale temporaries', () => {
  let root: ReturnType<typeof tempDir>;
  let dir: string;
  const writers: KillableProcess[] = [];
  beforeEach(() => {
    root = tempDir('mailsieve-output-folder-');
    dir = join(root.path, 'out');
    mkdirSync(dir);
  });
  afterEach(async () => {
    for (const writer of writers.splice(0)) {
      writer.killGroup();
      await writer.reap();
    }
    root.remove();
  });

  it("keeps a running writer's temporary, and removes it once the writer is killed, while its id still answers", async () => {
    const writer = await startWriter(root.path, dir);
    writers.push(writer);
    const written = [`.mailsieve-${writer.pid}.lock`, `results.csv.${writer.pid}.mailsieve-part`];
    expect(readdirSync(dir).sort()).toEqual(written);
    expect(removeStaleTemporaries(dir)).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(written);

    writer.killGroup();
    expect(await sweepUntilRemoved(dir)).toEqual(written);
    // Removed while the killed process is unreaped: its id answers kill(pid, 0) still.
    expect(answers(writer.pid)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('sweeps again when the folder is let go: a writer that stopped meanwhile leaves nothing', async () => {
    const writer = await startWriter(root.path, dir);
    writers.push(writer);
    const release = holdOutputFolder(dir);
    const mine = temporaryPathOf(join(dir, 'results.csv'));
    writeFileSync(mine, 'mine');
    expect(readdirSync(dir)).toContain(`.mailsieve-${process.pid}.lock`);
    expect(readdirSync(dir)).toContain(`results.csv.${writer.pid}.mailsieve-part`);
    // Held by both: a sweep leaves both writers' files.
    expect(removeStaleTemporaries(dir)).toEqual([]);

    writer.killGroup();
    await writer.reap();
    for (let i = 0; i < 500 && answers(writer.pid); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    // The killed writer's files went with the second sweep; this process's own temporary is its own to rename.
    expect(readdirSync(dir)).toEqual([`results.csv.${process.pid}.mailsieve-part`]);
  });

  it('counts holders in one process: the lock stays until the last lets go', () => {
    const first = holdOutputFolder(dir);
    const second = holdOutputFolder(dir);
    const lock = join(dir, `.mailsieve-${process.pid}.lock`);
    first();
    first();
    expect(existsSync(lock)).toBe(true);
    second();
    expect(existsSync(lock)).toBe(false);
  });

  it("removes a temporary whose lock nobody holds, though a process with the writer's id runs (a reused id)", () => {
    // The id of a running process that never wrote here: this test's parent.
    const pid = process.ppid;
    new Database(join(dir, `.mailsieve-${pid}.lock`)).close();
    writeFileSync(join(dir, `big-clean.csv.${pid}.mailsieve-part`), 'half');
    writeFileSync(join(dir, `big-clean.csv.${pid}.mailsieve-part.unused`), '');
    expect(removeStaleTemporaries(dir).sort()).toEqual([
      `.mailsieve-${pid}.lock`,
      `big-clean.csv.${pid}.mailsieve-part`,
      `big-clean.csv.${pid}.mailsieve-part.unused`,
    ]);
  });

  it('judges a temporary without a lock file by its process id, as before', () => {
    const running = process.ppid;
    writeFileSync(join(dir, `a.csv.${running}.mailsieve-part`), 'in use');
    // Above any process id a system gives (Linux: at most 2^22).
    writeFileSync(join(dir, 'b.csv.999999999.mailsieve-part'), 'left over');
    expect(removeStaleTemporaries(dir)).toEqual(['b.csv.999999999.mailsieve-part']);
    expect(readdirSync(dir)).toEqual([`a.csv.${running}.mailsieve-part`]);
  });
});
