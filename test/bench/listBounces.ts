// The list benchmark's bounces (issue 22): a SendGrid-shaped bounces export naming every `every`-th address of
// the list file (nine in ten hard, dated over the last 300 days, one in ten soft), and an activity file in
// which a tenth of the hard-bounced addresses opened a message after their bounce. Imported into a service
// folder by the built CLI (its answers then prepared, as the service does after an import), whose database
// each timed run of `clean --data-dir` starts from.
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { knownBouncerSet } from '../../service/identity/bounces.js';
import { prepareAnswers } from '../../service/identity/prepared.js';
import { SERVICE_DB_FILE } from '../../service/store/db.js';

const DAY_S = 86_400;

export interface BounceData {
  /** The service folder the files were imported into (copy its database, do not run lists in it). */
  readonly serviceDir: string;
  readonly bounceRows: number;
  readonly hard: number;
  readonly importMs: number;
  /** The set a list of the app's key builds as it starts (365 days), and how long that took. */
  readonly counting: number;
  readonly setMs: number;
}

async function writeLines(path: string, lines: AsyncIterable<string> | Iterable<string>): Promise<void> {
  const out = createWriteStream(path);
  for await (const line of lines)
    if (!out.write(`${line}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

export async function ensureBounceData(
  listPath: string,
  workDir: string,
  cli: string,
  every: number,
): Promise<BounceData> {
  mkdirSync(workDir, { recursive: true });
  const nowS = Math.floor(Date.now() / 1000);
  const bounces = join(workDir, 'bounces.csv');
  const activity = join(workDir, 'activity.csv');
  const opened: string[] = [];
  let bounceRows = 0;
  let hard = 0;
  async function* bounceLines(): AsyncIterable<string> {
    yield 'email,created,status,reason';
    let row = -1;
    for await (const line of createInterface({ input: createReadStream(listPath) })) {
      row++;
      if (row === 0 || row % every !== 0) continue;
      const email = line.slice(0, line.indexOf(','));
      if (email.startsWith('"') || !email.includes('@')) continue;
      bounceRows++;
      const bouncedAt = nowS - (row % 300) * DAY_S - 3600;
      if (bounceRows % 10 === 0) {
        yield `${email},${bouncedAt},4.2.2,"452 4.2.2 The email account that you tried to reach is over quota."`;
        continue;
      }
      hard++;
      if (hard % 10 === 0) opened.push(`${email},newsletter,open,${bouncedAt + 1800}`);
      yield `${email},${bouncedAt},5.1.1,"550 5.1.1 The email account that you tried to reach does not exist."`;
    }
  }
  await writeLines(bounces, bounceLines());
  await writeLines(activity, ['email,source,event,occurred_at', ...opened]);
  const serviceDir = join(workDir, 'service');
  const started = performance.now();
  for (const [kind, file] of [
    ['bounces', bounces],
    ['activity', activity],
  ])
    execFileSync(process.execPath, [cli, 'data', 'import', kind, file, '--data-dir', serviceDir], {
      stdio: 'ignore',
    });
  const importMs = performance.now() - started;
  const db = new Database(join(serviceDir, SERVICE_DB_FILE));
  try {
    // What the service does in the background after an import, done once here: the runs measure lists, not it.
    prepareAnswers(db);
    const setStarted = performance.now();
    const set = knownBouncerSet(db, 365, nowS);
    const setMs = performance.now() - setStarted;
    if (!set) throw new Error('no bounce counts: the bench data is wrong');
    return { serviceDir, bounceRows, hard, importMs, counting: set.size, setMs };
  } finally {
    db.close();
  }
}
