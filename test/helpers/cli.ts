import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The checkout's bin/mailsieve.js, from this module's source (test/helpers) or its build (dist/test/helpers). */
export const CLI = join(
  here,
  ...(here.includes(`${sep}dist${sep}`) ? ['..', '..', '..'] : ['..', '..']),
  'bin',
  'mailsieve.js',
);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built `mailsieve` CLI (dist/, built by `npm test` before Vitest) to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return spawnCli(args, env).done;
}

/**
 * A key made with `mailsieve keys create` in the single node's store at `dataDir`: without a rate limit and with
 * offline checks, as a test's node needs it. Throws (with the CLI's words) when it cannot be made.
 */
export async function createOfflineKey(dataDir: string): Promise<string> {
  const made = await runCli([
    'keys',
    'create',
    '--data-dir',
    dataDir,
    '--rate-limit',
    '0',
    '--checks',
    'offline',
  ]);
  if (made.code !== 0) throw new Error(`keys create failed: ${made.stderr}`);
  return made.stdout.trim();
}

/** Starts the built CLI: the child process (to kill), and its result once it ends (code -1 when killed). */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, done: outputOf(child) };
}

/** A child process's exit code and output, once it ends (code -1 when killed). */
export function outputOf(child: ChildProcess): Promise<CliResult> {
  return new Promise<CliResult>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Starts a long-running CLI command and resolves once a stdout line matches `ready`. */
export function startCli(
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = {},
): Promise<{
  child: ChildProcess;
  match: RegExpMatchArray;
  /** What it has printed so far, stdout and stderr (the last 256 KiB). */
  output(): string;
  stop(): Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let printed = '';
    const keep = (text: string) => (printed = (printed + text).slice(-256 * 1024));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      keep(c.toString());
    });
    const lines = createInterface({ input: child.stdout });
    // Lines after the ready one may come in the same chunk: every line is kept, before and after it.
    lines.on('line', (line) => {
      keep(`${line}\n`);
      const match = line.match(ready);
      if (match)
        resolve({
          child,
          match,
          output: () => printed,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode);
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
    });
    child.once('exit', (code) =>
      reject(new Error(`mailsieve ${args.join(' ')} exited with ${code}: ${stderr}`)),
    );
  });
}
