// What a job's checks were, on Results, in plain words: why that level ran ("No internet connection was found,
// so only syntax and lists were checked.") and what it means for the rows. The decision's own reason, in the
// service's terms (a resolver's address, `auto:`), stays in the job's summary and the CLI's --json.
import { CHECKS_LEVEL_WORDS, checksInPlainWords, type ChecksLevelName } from '../../shared/desktop/checks.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { UnknownCauses } from './UnknownCauses.js';

/** Results' figure of the rows no check confirmed, on a job that ran offline (History says the same). */
export const NOT_CHECKED_OFFLINE = 'Not checked (offline)';

/** The level a job ran with; null for a job from before levels were recorded that ran online. */
export function checksLevelOf(job: JobDetail): ChecksLevelName | 'provider' | null {
  return (
    job.checksRun?.level ??
    (job.checks === 'offline' ? 'offline' : job.checks === 'provider' ? 'provider' : null)
  );
}

/** Why the job ran at its level, as a person says it (null: not known). */
export function checksWhy(job: JobDetail): string | null {
  const level = checksLevelOf(job);
  return level === null ? null : checksInPlainWords({ level, reason: job.checksRun?.reason ?? '' });
}

export function ChecksNote({ job }: Readonly<{ job: JobDetail }>) {
  const level = checksLevelOf(job);
  if (level === null || level === 'provider') return null;
  const why = checksWhy(job);
  if (level === 'offline')
    return (
      <aside className="note" aria-label="About offline checks">
        <p>
          <strong>Offline checks confirm syntax only.</strong> {why} A well-formed address reads{' '}
          <code>unknown</code> (code 10 “Syntax OK”) and its “Valid Email” column stays empty, so “Safe to
          send only” holds just the corrected addresses: export <strong>Clean</strong> for every row except
          invalid and risky. <strong>Re-check unknown rows</strong> once DNS or mailbox checks can run.
        </p>
      </aside>
    );
  return (
    <aside className="note" aria-label="About the checks">
      <p>
        <strong>Checked with {CHECKS_LEVEL_WORDS[level]}.</strong> {why}{' '}
        {level === 'dns'
          ? 'Domains that take mail read valid (code 20) without asking the mailbox; domains that do not exist or take no mail are invalid (310, 325).'
          : 'Each mailbox was asked of its mail server without sending mail: 50 exists, 400 does not, 410 is full, 45 the domain accepts every address.'}{' '}
        Rows that could not be checked are <code>unknown</code> with the reason.
      </p>
      <UnknownCauses causes={job.lastDocument?.online?.unknown_causes} />
    </aside>
  );
}
