// The Checks setting of the local service (issue #11): Automatic, Offline only, Domains (DNS), Mailboxes
// (SMTP); what the network allows (the preflight) in words beside it; for mailbox checks the HELO name, the
// MAIL FROM address and an optional SOCKS5 proxy. The proxy's password is sent once and never shown again.
import { useEffect, useId, useRef, useState } from 'react';
import {
  CHECKS_CHOICES,
  CHECKS_CHOICE_TITLES,
  type ChecksChoice,
  type ChecksInfo,
  type ChecksInput,
} from '../../shared/desktop/checks.js';
import { app } from '../platform/app.js';
import { useAppStore } from '../store/index.js';

const CHOICE_WORDS: Readonly<Record<ChecksChoice, string>> = {
  auto: 'domain checks when DNS answers from here, else offline checks. Mailboxes are asked only when you choose them.',
  offline:
    'syntax, typos, role accounts, disposable and other domain types, duplicates. Nothing leaves this computer.',
  dns: 'also asks DNS whether each domain takes mail (no domain, no mail server).',
  smtp: 'also asks each domain’s mail server whether the mailbox exists (port 25, slower).',
};

type Form = {
  heloName: string;
  mailFrom: string;
  isProxyOn: boolean;
  proxyHost: string;
  proxyPort: string;
  proxyUser: string;
  proxyPassword: string;
};

function formOf(info: ChecksInfo): Form {
  return {
    heloName: info.heloName,
    mailFrom: info.mailFrom,
    isProxyOn: info.proxy !== null,
    proxyHost: info.proxy?.host ?? '',
    proxyPort: info.proxy ? String(info.proxy.port) : '1080',
    proxyUser: info.proxy?.user ?? '',
    proxyPassword: '',
  };
}

export function ChecksSetting() {
  const notify = useAppStore((s) => s.notify);
  const [info, setInfo] = useState<ChecksInfo | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [isChecking, setChecking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  // Each choice made starts a new generation: a reply to an earlier one (a slow network check, a save)
  // must not put back the choice the user has just changed.
  const generation = useRef(0);

  async function preflight() {
    const asked = generation.current;
    setChecking(true);
    const reply = await app.runPreflight();
    if (asked !== generation.current) return;
    setChecking(false);
    if (reply.ok) setInfo(reply.value);
    else setError(reply.error.message);
  }

  useEffect(() => {
    let isCurrent = true;
    void app.getChecks().then((reply) => {
      if (!isCurrent) return;
      if (!reply.ok) return setError(reply.error.message);
      setInfo(reply.value);
      setForm(formOf(reply.value));
      void preflight();
    });
    return () => {
      isCurrent = false;
    };
  }, []);

  if (!info || !form) return error ? <p className="error">{error}</p> : null;

  const inputOf = (choice: ChecksChoice, next: Form, withPassword: boolean): ChecksInput => ({
    choice,
    heloName: next.heloName,
    mailFrom: next.mailFrom,
    proxy: next.isProxyOn
      ? { host: next.proxyHost, port: Number(next.proxyPort), user: next.proxyUser }
      : null,
    ...(withPassword && next.proxyPassword !== '' ? { proxyPassword: next.proxyPassword } : {}),
  });

  async function save(input: ChecksInput, words: string) {
    const asked = ++generation.current;
    setError(null);
    const reply = await app.setChecks(input);
    if (asked !== generation.current) return;
    if (!reply.ok) return setError(reply.error.message);
    setInfo(reply.value);
    setForm((current) => (current ? { ...current, proxyPassword: '' } : current));
    notify(words);
    await preflight();
  }

  const preflightWords = isChecking
    ? 'Checking the network…'
    : (info.preflight?.summary ?? 'The network has not been checked yet.');
  const change = (patch: Partial<Form>) => setForm({ ...form, ...patch });
  return (
    <section className="checks-setting" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Checks of the local service</h2>
      <div role="radiogroup" aria-labelledby={`${id}-legend`} className="choice">
        <p id={`${id}-legend`} className="legend">
          Checks
        </p>
        {CHECKS_CHOICES.map((choice) => (
          <label key={choice} className="radio card">
            <input
              type="radio"
              name="checks"
              value={choice}
              checked={info.choice === choice}
              onChange={() => {
                // Shown at once; the stored setting answers back.
                setInfo({ ...info, choice });
                void save(inputOf(choice, form, false), `Checks: ${CHECKS_CHOICE_TITLES[choice]}.`);
              }}
            />
            <span>
              <strong>{CHECKS_CHOICE_TITLES[choice]}</strong>
              {choice === 'auto' ? ' (default)' : ''}: {CHOICE_WORDS[choice]}
            </span>
          </label>
        ))}
      </div>
      <div className="preflight" aria-live="polite">
        <p role="status" aria-label="Network check">
          {preflightWords}
        </p>
        {info.preflight && !isChecking ? (
          <ul className="muted small">
            <li>DNS: {info.preflight.dns.detail}</li>
            <li>
              SMTP{info.preflight.smtp.throughProxy ? ' (through the proxy)' : ''}:{' '}
              {info.preflight.smtp.detail}
            </li>
          </ul>
        ) : null}
        <button type="button" className="small-button" disabled={isChecking} onClick={() => void preflight()}>
          Check the network again
        </button>
        {info.running ? (
          <p className="small" aria-label="Checks in use">
            The local service runs now with: {info.running.reason}
          </p>
        ) : null}
        {info.isRestartPending ? (
          <p className="small">The new setting applies once the local jobs running now finish.</p>
        ) : null}
        {info.overrides.dnsServers !== null || info.overrides.smtpPort !== null ? (
          <p className="muted small">
            Set by the environment:{' '}
            {[
              info.overrides.dnsServers !== null ? `DNS servers ${info.overrides.dnsServers}` : null,
              info.overrides.smtpPort !== null ? `mail servers’ port ${info.overrides.smtpPort}` : null,
            ]
              .filter(Boolean)
              .join('; ')}
            .
          </p>
        ) : null}
      </div>
      {info.choice === 'smtp' ? (
        <form
          className="smtp-settings"
          onSubmit={(event) => {
            event.preventDefault();
            void save(inputOf('smtp', form, true), 'Mailbox check settings saved.');
          }}
        >
          <p className="warning small" role="note">
            Mail servers see who asks. Probing many mailboxes from a home IP address can get that address
            blocklisted, and most home networks block port 25: use a HELO name whose DNS points to your IP, or
            a SOCKS5 proxy on a server allowed to send mail.
          </p>
          <label htmlFor={`${id}-helo`}>HELO name</label>
          <input
            id={`${id}-helo`}
            value={form.heloName}
            placeholder={info.defaults.heloName}
            spellCheck={false}
            onChange={(event) => change({ heloName: event.target.value })}
          />
          <label htmlFor={`${id}-from`}>MAIL FROM address</label>
          <input
            id={`${id}-from`}
            value={form.mailFrom}
            placeholder={info.defaults.mailFrom}
            spellCheck={false}
            onChange={(event) => change({ mailFrom: event.target.value })}
          />
          <label className="checkbox">
            <input
              type="checkbox"
              checked={form.isProxyOn}
              onChange={(event) => change({ isProxyOn: event.target.checked })}
            />
            Connect to mail servers through a SOCKS5 proxy
          </label>
          {form.isProxyOn ? (
            <fieldset>
              <legend>SOCKS5 proxy</legend>
              <label htmlFor={`${id}-proxy-host`}>Proxy host</label>
              <input
                id={`${id}-proxy-host`}
                value={form.proxyHost}
                spellCheck={false}
                onChange={(event) => change({ proxyHost: event.target.value })}
              />
              <label htmlFor={`${id}-proxy-port`}>Proxy port</label>
              <input
                id={`${id}-proxy-port`}
                inputMode="numeric"
                value={form.proxyPort}
                onChange={(event) => change({ proxyPort: event.target.value })}
              />
              <label htmlFor={`${id}-proxy-user`}>Proxy user (optional)</label>
              <input
                id={`${id}-proxy-user`}
                value={form.proxyUser}
                autoComplete="off"
                spellCheck={false}
                onChange={(event) => change({ proxyUser: event.target.value })}
              />
              <label htmlFor={`${id}-proxy-password`}>Proxy password (optional)</label>
              <input
                id={`${id}-proxy-password`}
                type="password"
                autoComplete="off"
                value={form.proxyPassword}
                placeholder={info.proxy?.isProxyAuthStored ? 'Stored (leave empty to keep it)' : ''}
                onChange={(event) => change({ proxyPassword: event.target.value })}
              />
              <p className="muted small">The password is stored like API keys and never shown again.</p>
            </fieldset>
          ) : null}
          <div className="actions">
            <button type="submit">Save mailbox check settings</button>
          </div>
        </form>
      ) : null}
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </section>
  );
}
