import { useState } from 'react';
import type { VerifyAnswer } from '../../shared/desktop/contract.js';
import {
  answerListStatus,
  codeMeaning,
  domainTypeMeaning,
  statusMeaning,
  statusName,
} from '../../shared/vocabulary.js';
import { useAppStore } from '../store/index.js';

/**
 * The status an answer is shown under: the list status the same address gets in a list (so Verify and
 * Results name it alike), named in the key's mode.
 */
export function answerStatus(answer: VerifyAnswer): { key: string; name: string } {
  const key = answerListStatus(answer.statusCode, answer.corrections);
  return { key, name: statusName(key, answer.mode) };
}

/** The E1 answer in sentences. */
export function explainAnswer(answer: VerifyAnswer): string[] {
  const lines: string[] = [];
  const { key, name } = answerStatus(answer);
  lines.push(`${name}: ${statusMeaning(key)}`);
  lines.push(
    `Code ${answer.statusCode}: ${codeMeaning(answer.statusCode, answer.domainType)}.` +
      (answer.status !== key ? ` (The service’s status word: ${answer.status}.)` : ''),
  );
  if (answer.checks === 'offline' && (answer.statusCode === 10 || answer.statusCode === 55))
    lines.push(
      'The local service checks offline, so it confirms syntax only: it did not ask DNS or the mail server whether the mailbox exists.',
    );
  if (answer.corrections.length > 0)
    lines.push(`Did you mean ${answer.corrections.join(' or ')}? The suggestion passes every check itself.`);
  if (answer.domainType) lines.push(`Domain type: ${domainTypeMeaning(answer.domainType)}.`);
  if (answer.isRoleAccount)
    lines.push(
      'This is a role account (a shared mailbox such as info@ or sales@): fine for transactional mail, often flagged as spam for bulk mail.',
    );
  if (answer.engagementScore !== null) lines.push(`Engagement score ${answer.engagementScore} of 10.`);
  return lines;
}

export function VerifyScreen() {
  const verify = useAppStore((s) => s.verify);
  const verifyAddress = useAppStore((s) => s.verifyAddress);
  const [email, setEmail] = useState(verify.status === 'checking' ? verify.email : '');
  return (
    <section className="screen" aria-labelledby="verify-heading">
      <header className="screen-head">
        <h1 id="verify-heading">Verify an address</h1>
        <p className="muted">Check one address on the current connection and read what the answer means.</p>
      </header>
      <form
        className="verify-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (email.trim()) void verifyAddress(email.trim());
        }}
      >
        <label htmlFor="verify-email">Email address</label>
        <div className="inline">
          <input
            id="verify-email"
            type="text"
            inputMode="email"
            autoComplete="off"
            spellCheck={false}
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
          <button
            type="submit"
            className="primary"
            disabled={verify.status === 'checking' || email.trim() === ''}
          >
            {verify.status === 'checking' ? 'Verifying…' : 'Verify'}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {verify.status === 'failed' ? (
          <p className="error" role="alert">
            {verify.error}
          </p>
        ) : null}
        {verify.status === 'done' ? (
          <section
            className={`answer panel tone-border-${answerStatus(verify.answer).key}`}
            aria-labelledby="answer-heading"
          >
            <h2 id="answer-heading">
              {verify.answer.address || '(empty)'}{' '}
              <span className={`badge tone-${answerStatus(verify.answer).key}`}>
                {answerStatus(verify.answer).name}
              </span>
            </h2>
            <ul>
              {explainAnswer(verify.answer).map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            {verify.answer.explain.length > 0 ? (
              <section aria-labelledby="explain-heading">
                <h3 id="explain-heading">What was asked and answered</h3>
                <ol className="explain small">
                  {verify.answer.explain.map((line, index) => (
                    <li key={index}>
                      <code>{line}</code>
                    </li>
                  ))}
                </ol>
              </section>
            ) : null}
            <p className="muted small">Checks: {verify.answer.checksRun.reason}</p>
            <p className="muted small">
              Answered by the{' '}
              {verify.answer.connection === 'embedded' ? 'local service' : 'provider’s service'} in{' '}
              {verify.answer.mode === 'safe_to_send' ? 'safe-to-send' : 'legacy validation'} mode.
            </p>
          </section>
        ) : null}
      </div>
    </section>
  );
}
