import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/** Starts a child process and resolves with the first stdout line matching `ready`. */
export function spawnUntil(
  command: string,
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`${command} did not get ready in time`)), 30_000);
    lines.on('line', (line) => {
      const match = line.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    });
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)));
  });
}

/**
 * Starts a child process whose standard output goes to `logFile` (as a service manager keeps a node's log: the
 * measured process pays for its lines, this one reads none of them), and resolves once `isReady` says so (asked
 * every 50 ms; a server's port answering, not a line of its log, which a quiet node may not write).
 */
export async function spawnLogging(
  command: string,
  args: string[],
  isReady: () => Promise<boolean>,
  logFile: string,
): Promise<ChildProcess> {
  const out = openSync(logFile, 'w');
  const child = spawn(command, args, { stdio: ['ignore', out, 'inherit'] });
  closeSync(out);
  let exited = false;
  child.once('exit', () => (exited = true));
  for (const started = Date.now(); Date.now() - started < 30_000 && !exited; await sleep(50))
    if (await isReady()) return child;
  child.kill();
  throw new Error(`${command} ${args.join(' ')} did not get ready (its log: ${logFile})`);
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The bare route's answer (bareServer.ts): E1's answer for the bench's first address, jane.doe@example.com. */
export const BARE_BODY = {
  safe_to_send: { address: 'jane.doe@example.com', status: 'valid', status_code: 10 },
};
