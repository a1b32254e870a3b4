// `mailsieve status --database URL`: a team server at a glance (docs/operations.md, "Status"): the nodes alive,
// the queue of list work by kind and state, the lists in flight per key, and each source address's last hour.
// `--json` prints the same as one JSON object, for scripts.
import { describeDatabase } from '../../service/pg/url.js';
import type { TeamStatus } from '../../service/pg/status.js';
import { CliError } from './errors.js';
import { databaseUrlOf, type DatabaseCliOptions } from './teamOptions.js';
import { formatCount } from '../../shared/count.js';

export interface StatusOptions extends DatabaseCliOptions {
  json?: boolean;
}

/** Rows of cells as aligned columns (numbers to the right), indented by two spaces. */
function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  numeric: ReadonlySet<number>,
): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    `  ${cells
      .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd()}`;
  return [line(header), ...rows.map(line)];
}

function ago(then: string, now: string): string {
  const seconds = Math.max(0, Math.round((Date.parse(now) - Date.parse(then)) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

/** A node's self-check in a few words (the full check is in --json). */
function selfCheckWords(value: unknown): string {
  const check = value as {
    is_listed?: boolean;
    ok?: boolean;
    problems?: { kind: string }[];
    block_lists?: { zone: string; status: string }[];
  } | null;
  if (!check) return '-';
  if (check.is_listed)
    return `LISTED on ${(check.block_lists ?? [])
      .filter((l) => l.status === 'listed')
      .map((l) => l.zone)
      .join(', ')}`;
  if (check.ok) return 'ok';
  const kinds = [...new Set((check.problems ?? []).map((p) => p.kind))];
  return kinds.join(', ');
}

const pairs = (counts: Record<string, number>): string =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${formatCount(n)}`)
    .join(', ');

export function formatStatus(status: TeamStatus, where: string): string {
  const out: string[] = [
    `Team server ${where}, at ${status.checked_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`,
    '',
  ];
  out.push(`Nodes alive: ${status.nodes.length}`);
  if (status.nodes.length === 0)
    out.push('  none (a node appears when it starts, and is gone when its lease runs out)');
  else
    out.push(
      ...table(
        ['ROLE', 'SOURCE ADDRESS', 'VERSION', 'LAST SEEN', 'PARTS', 'HOST/PID', 'SELF-CHECK'],
        status.nodes.map((node) => [
          node.role,
          node.role === 'api' ? '-' : (node.source_address ?? 'system'),
          node.version,
          ago(node.last_seen, status.checked_at),
          String(node.parts_in_hand),
          `${node.host_name}/${node.pid}`,
          selfCheckWords(node.self_check),
        ]),
        new Set([4]),
      ),
    );
  out.push('', 'Queue of list work (jobs)');
  out.push(
    ...table(
      ['KIND', 'WAITING', 'ACTIVE', 'RETRY'],
      Object.entries(status.queue).map(([kind, states]) => [
        kind,
        formatCount(states.waiting),
        formatCount(states.active),
        formatCount(states.retry),
      ]),
      new Set([1, 2, 3]),
    ),
  );
  out.push('', 'Lists in flight');
  if (status.lists_in_flight.length === 0) out.push('  none');
  else
    out.push(
      ...table(
        ['KEY', 'LABEL', 'LISTS', 'ROWS', 'DONE'],
        status.lists_in_flight.map((key) => [
          `#${key.key_id}`,
          key.label,
          formatCount(key.lists),
          formatCount(key.records),
          formatCount(key.completed),
        ]),
        new Set([2, 3, 4]),
      ),
    );
  out.push('', 'Last hour by source address');
  if (status.last_hour.length === 0)
    out.push('  nothing (no verifier node is alive or has worked this hour)');
  for (const hour of status.last_hour) {
    const refusals = pairs(hour.refusals);
    const unknown = pairs(hour.unknown);
    out.push(
      `  ${hour.source_address || 'system'}: ${formatCount(hour.conversations)} SMTP conversations; ` +
        `refusals: ${refusals || 'none'}; unknown answers: ${unknown || 'none'}`,
    );
  }
  return out.join('\n');
}

export async function status(options: StatusOptions): Promise<void> {
  const url = databaseUrlOf(options);
  if (!url)
    throw new CliError(
      "status reads a team server's database: give --database postgres://… (or set MAILSIEVE_DATABASE_URL).",
    );
  // PostgreSQL's client is loaded only by the commands that use it.
  const [{ databaseProblem, openPostgres }, { readTeamStatus }] = await Promise.all([
    import('../../service/pg/db.js'),
    import('../../service/pg/status.js'),
  ]);
  let pool;
  try {
    pool = await openPostgres(url, { max: 1, applicationName: 'mailsieve-status' });
  } catch (error) {
    throw new CliError(databaseProblem(url, error));
  }
  try {
    const found = await readTeamStatus(pool);
    process.stdout.write(
      `${options.json ? JSON.stringify(found) : formatStatus(found, `on ${describeDatabase(url)}`)}\n`,
    );
  } catch (error) {
    throw new CliError(databaseProblem(url, error));
  } finally {
    await pool.end();
  }
}
