// A program started in a process group of its own, to be killed with its whole group (SIGKILL) and found dead
// by a rerun started at once. Its parent is `sleep`, which never waits for a child: the killed process stays
// a zombie, and its process id still answers kill(pid, 0), until the test ends the parent. That is the
// moment of a rerun right after a kill, held still: the killed process has let go of its files, but its
// process id seems to run (it is exiting, or its parent has not reaped it yet).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface KillableProcess {
  /** The program's process id, which is also its process group's. */
  readonly pid: number;
  /** Its standard output, line by line. */
  readonly lines: AsyncIterable<string>;
  /** SIGKILL to the program's whole process group (no wait: its process id still answers until `reap`). */
  killGroup(): void;
  /** Ends the parent that holds the killed program unreaped (its zombie goes with it). */
  reap(): Promise<void>;
}

/** Starts `node script ...args` in a new session (so a new process group), its parent a `sleep`. */
export async function startKillable(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<KillableProcess> {
  // `setsid` runs in the background job, not a group leader, so it makes the new session without forking: `$!`
  // is the program's own process id. `exec sleep` leaves the program a child of a parent that never waits.
  const quoted = [process.execPath, script, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`);
  const parent: ChildProcess = spawn(
    '/bin/sh',
    ['-c', `setsid ${quoted.join(' ')} & echo "$!"; exec sleep 600`],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const exited = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
  const lines = createInterface({ input: parent.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  const pid = Number(first.value);
  if (first.done || !Number.isInteger(pid) || pid <= 0) {
    parent.kill('SIGKILL');
    throw new Error(`Could not start ${script}: no process id from the shell`);
  }
  return {
    pid,
    lines: { [Symbol.asyncIterator]: () => lines },
    killGroup: () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    },
    async reap() {
      if (parent.exitCode === null && parent.signalCode === null) parent.kill('SIGKILL');
      await exited;
    },
  };
}

/** Whether process `pid` still answers kill(pid, 0): true for a zombie too. */
export function answers(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits (up to a minute) until process `pid` writes at least `count` temporaries in `dir`, which may not
 * exist yet: their names, sorted (fewer when it never does).
 */
export async function temporariesOf(dir: string, pid: number, count = 1): Promise<string[]> {
  let found: string[] = [];
  for (let i = 0; i < 6000; i++) {
    try {
      found = readdirSync(dir).filter((name) => name.endsWith(`.${pid}.mailsieve-part`));
    } catch {
      // Not made yet.
    }
    if (found.length >= count) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return found.sort();
}
