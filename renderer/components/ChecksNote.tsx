// What a job's checks were, on Results: "Offline checks confirm syntax only" only when the job ran offline;
// otherwise what was checked (domains in DNS, mailboxes on their mail servers) and why that level ran.
import { CHECKS_LEVEL_WORDS } from '../../shared/desktop/checks.js';
import type { JobDetail } from '../../shared/desktop/contract.js';
import { UnknownCauses } from './UnknownCauses.js';

export function ChecksNote({ job }: Readonly<{ job: JobDetail }>) {
  const level =
    job.checksRun?.level ??
    (job.checks === 'offline' ? 'offline' : job.checks === 'provider' ? 'provider' : null);
  if (level === null || level === 'provider') return null;
  if (level === 'offline')
    return (
      <aside className="note" aria-label="About offline checks">
        <p>
          <strong>Offline checks confirm syntax only.</strong> The local service did not ask DNS or mail
          servers, so a well-formed address reads <code>unknown</code> (code 10 “Syntax OK”) and its “Valid
          Email” column stays empty. “Safe to send only” therefore holds just the corrected addresses; export{' '}
          <strong>Clean</strong> for every row except invalid and risky.
          {job.checksRun?.reason ? ` ${job.checksRun.reason}` : ''} <strong>Re-check unknown rows</strong>{' '}
          once DNS or mailbox checks can run.
        </p>
      </aside>
    );
  return (
    <aside className="note" aria-label="About the checks">
      <p>
        <strong>Checked with {CHECKS_LEVEL_WORDS[level]}.</strong> {job.checksRun?.reason ?? ''}{' '}
        {level === 'dns'
          ? 'Domains that take mail read valid (code 20) without asking the mailbox; domains that do not exist or take no mail are invalid (310, 325).'
          : 'Each mailbox was asked of its mail server without sending mail: 50 exists, 400 does not, 410 is full, 45 the domain accepts every address.'}{' '}
        Rows that could not be checked are <code>unknown</code> with the reason.
      </p>
      <UnknownCauses causes={job.lastDocument?.online?.unknown_causes} />
    </aside>
  );
}
