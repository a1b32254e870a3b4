import { useState } from 'react';
import type { PersonAnswer, PersonLookupInput } from '../../shared/desktop/contract.js';
import { activityLines, detailLines, queryWords, summaryOf } from '../personWords.js';
import { useAppStore } from '../store/index.js';

type By = PersonLookupInput['by'];

const BY_LABELS: Readonly<Record<By, string>> = {
  email: 'Email address',
  postal: 'Name and postal address',
  hash: 'Hash (MD5 or SHA-1)',
};

const POSTAL_FIELDS = [
  ['first', 'First name', 'given-name'],
  ['last', 'Last name', 'family-name'],
  ['street', 'Street', 'address-line1'],
  ['city', 'City', 'address-level2'],
  ['state', 'State', 'address-level1'],
  ['zip', 'ZIP code', 'postal-code'],
] as const;
type PostalField = (typeof POSTAL_FIELDS)[number][0];

const EMPTY_POSTAL: Record<PostalField, string> = {
  first: '',
  last: '',
  street: '',
  city: '',
  state: '',
  zip: '',
};

/** The query the form describes, or null while it is incomplete. */
function queryOf(
  by: By,
  email: string,
  hash: string,
  postal: Record<PostalField, string>,
): PersonLookupInput | null {
  if (by === 'email') return email.trim() ? { by, email: email.trim() } : null;
  if (by === 'hash') return hash.trim() ? { by, hash: hash.trim() } : null;
  const p = Object.fromEntries(Object.entries(postal).map(([k, v]) => [k, v.trim()])) as typeof postal;
  const isComplete = p.first && p.last && p.street && (p.zip || (p.city && p.state));
  return isComplete ? { by, ...p } : null;
}

export function PersonAnswerView({
  query,
  answer,
}: Readonly<{ query: PersonLookupInput; answer: PersonAnswer }>) {
  const summary = summaryOf(answer);
  const details = detailLines(answer);
  const hasPerson = summary !== null || details.length > 0 || answer.postalAddress !== null;
  return (
    <section className="answer panel" aria-labelledby="person-heading">
      <h2 id="person-heading">{queryWords(query)}</h2>
      {answer.isMatch && !hasPerson ? (
        <p>The reference data has no attributes for this person; only email activity is known.</p>
      ) : null}
      {!answer.isMatch ? (
        <p className="no-match">
          No match in the reference data.
          {answer.connection === 'embedded' ? (
            <span className="muted">
              {' '}
              The local service knows only the people imported with <code>mailsieve data import people</code>.
            </span>
          ) : null}
        </p>
      ) : null}
      {summary ? <p className="summary">{summary}</p> : null}
      {details.length > 0 ? (
        <ul aria-label="Attributes">
          {details.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
      {answer.postalAddress ? (
        <p>
          Postal address: {answer.postalAddress.firstName} {answer.postalAddress.lastName},{' '}
          {answer.postalAddress.address}, {answer.postalAddress.city}, {answer.postalAddress.state}{' '}
          {answer.postalAddress.zip}.
        </p>
      ) : null}
      {answer.isMatch && answer.eam ? (
        <>
          <h3 id="activity-heading">Email activity</h3>
          <ul aria-labelledby="activity-heading">
            {activityLines(answer.eam).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </>
      ) : null}
      <p className="muted small">
        Answered by the {answer.connection === 'embedded' ? 'local service' : 'provider’s service'}.
      </p>
    </section>
  );
}

export function LookupScreen() {
  const lookup = useAppStore((s) => s.lookup);
  const lookUpPerson = useAppStore((s) => s.lookUpPerson);
  const clearLookup = useAppStore((s) => s.clearLookup);
  const [by, setBy] = useState<By>(lookup.status === 'idle' ? 'email' : lookup.query.by);
  const [email, setEmail] = useState('');
  const [hash, setHash] = useState('');
  const [postal, setPostal] = useState(EMPTY_POSTAL);
  const query = queryOf(by, email, hash, postal);
  const isLooking = lookup.status === 'looking';
  return (
    <section className="screen" aria-labelledby="lookup-heading">
      <header className="screen-head">
        <h1 id="lookup-heading">Look up a person</h1>
        <p className="muted">
          Ask the current connection what it knows about one person: attributes, interests and email activity,
          in words.
        </p>
      </header>
      <form
        className="lookup-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (query) void lookUpPerson(query);
        }}
      >
        <fieldset>
          <legend>Look up by</legend>
          <div className="lookup-by">
            {(Object.keys(BY_LABELS) as By[]).map((option) => (
              <label key={option} className="radio">
                <input
                  type="radio"
                  name="lookup-by"
                  value={option}
                  checked={by === option}
                  onChange={() => {
                    setBy(option);
                    clearLookup();
                  }}
                />
                {BY_LABELS[option]}
              </label>
            ))}
          </div>
        </fieldset>
        {by === 'email' ? (
          <div className="field">
            <label htmlFor="lookup-email">Email address</label>
            <input
              id="lookup-email"
              type="text"
              inputMode="email"
              autoComplete="off"
              spellCheck={false}
              value={email}
              onChange={(event) => setEmail(event.target.value)}
            />
          </div>
        ) : null}
        {by === 'hash' ? (
          <div className="field">
            <label htmlFor="lookup-hash">MD5 or SHA-1 hash</label>
            <input
              id="lookup-hash"
              type="text"
              autoComplete="off"
              spellCheck={false}
              aria-describedby="lookup-hash-hint"
              value={hash}
              onChange={(event) => setHash(event.target.value)}
            />
            <p id="lookup-hash-hint" className="muted small">
              Of the address lower-cased, without spaces: 32 hex digits (MD5) or 40 (SHA-1).
            </p>
          </div>
        ) : null}
        {by === 'postal' ? (
          <div className="postal-grid">
            {POSTAL_FIELDS.map(([name, label, autoComplete]) => (
              <div key={name} className={`field field-${name}`}>
                <label htmlFor={`lookup-${name}`}>{label}</label>
                <input
                  id={`lookup-${name}`}
                  type="text"
                  autoComplete={autoComplete}
                  value={postal[name]}
                  onChange={(event) => setPostal({ ...postal, [name]: event.target.value })}
                />
              </div>
            ))}
            <p className="muted small postal-hint">Give the ZIP code, or the city and state.</p>
          </div>
        ) : null}
        <div>
          <button type="submit" className="primary" disabled={isLooking || query === null}>
            {isLooking ? 'Looking up…' : 'Look up'}
          </button>
        </div>
      </form>
      <div aria-live="polite">
        {lookup.status === 'failed' ? (
          <p className="error" role="alert">
            {lookup.error}
          </p>
        ) : null}
        {lookup.status === 'done' ? <PersonAnswerView query={lookup.query} answer={lookup.answer} /> : null}
      </div>
    </section>
  );
}
