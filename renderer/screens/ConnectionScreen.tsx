import { useEffect, useState } from 'react';
import { LIST_SERVICE_KEYS } from '../../shared/api/listServiceNames.js';
import { LIST_SERVICE_TITLES } from '../../shared/api/listServiceNames.js';
import { isLoopbackUrl } from '../../shared/api/loopback.js';
import type { ConnectionInput } from '../../shared/desktop/contract.js';
import { ChecksSetting } from '../components/ChecksSetting.js';
import { keyQuotaWords } from '../quotaWords.js';
import { useAppStore } from '../store/index.js';

/**
 * The list services of a provider key. Our own service says them (`GET /v5/key`); the provider does not, so
 * the user ticks what their account has, and the mapper offers those.
 */
/** The host of a plain-HTTP address on another machine, for which the key would travel unencrypted. */
function plainHttpHostOf(baseUrl: string): string | undefined {
  try {
    const url = new URL(baseUrl);
    return url.protocol === 'http:' && !isLoopbackUrl(baseUrl) ? url.host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * "Allow plain HTTP on my network": shown for an http:// address off this computer, unticked unless the
 * saved connection allows it. The core refuses such an address without it (electron/core/connection/keyOrigin.ts).
 */
function PlainHttpSetting({
  host,
  isAllowed,
  onChange,
}: Readonly<{ host: string; isAllowed: boolean; onChange: (isAllowed: boolean) => void }>) {
  return (
    <div className="plain-http">
      <label className="checkbox">
        <input
          type="checkbox"
          checked={isAllowed}
          onChange={(event) => onChange(event.target.checked)}
          aria-describedby="plain-http-warning"
        />
        Allow plain HTTP on my network
      </label>
      <p id="plain-http-warning" className={isAllowed ? 'warning small' : 'muted small'}>
        {host} is not on this computer and its address starts with http://: the API key travels unencrypted
        with every request, readable by anyone on the networks in between. Tick this only for a service on a
        network you trust; if it has an https:// address, use that instead.
      </p>
    </div>
  );
}

function ProviderServices({ isProviderInUse }: Readonly<{ isProviderInUse: boolean }>) {
  const allowed = useAppStore((s) => s.allowedServices);
  const loadAllowedServices = useAppStore((s) => s.loadAllowedServices);
  const setChosenServices = useAppStore((s) => s.setChosenServices);
  useEffect(() => {
    if (allowed.status === 'idle') void loadAllowedServices();
  }, [allowed.status, loadAllowedServices]);
  if (allowed.status !== 'ready') return null;
  const { value } = allowed;
  if (isProviderInUse && value.source === 'key')
    return (
      <p className="small">
        The key says which list services it may run:{' '}
        {value.services.map((service) => LIST_SERVICE_TITLES[service]).join(', ') || 'none'}.
      </p>
    );
  const chosen = value.chosen;
  return (
    <fieldset className="provider-services">
      <legend>List services your key has</legend>
      {LIST_SERVICE_KEYS.map((service) => {
        const isChosen = chosen.includes(service);
        return (
          <label key={service} className="checkbox">
            <input
              type="checkbox"
              checked={isChosen}
              // One service at least: a job needs something to run.
              disabled={isChosen && chosen.length === 1}
              onChange={(event) =>
                void setChosenServices(
                  event.target.checked ? [...chosen, service] : chosen.filter((other) => other !== service),
                )
              }
            />
            {LIST_SERVICE_TITLES[service]}
          </label>
        );
      })}
      <p className="muted small">
        The provider’s service does not tell a key’s services: tick those of your account, and New job offers
        them.
      </p>
    </fieldset>
  );
}

/**
 * What is left of the saved key's quota, as its service tells it (our own service does; the provider does
 * not, and nothing is shown). Asked again each time the screen opens.
 */
function SavedKeyQuota() {
  const quota = useAppStore((s) => s.keyQuota);
  const loadKeyQuota = useAppStore((s) => s.loadKeyQuota);
  useEffect(() => {
    void loadKeyQuota();
  }, [loadKeyQuota]);
  const words = quota.status === 'ready' ? keyQuotaWords(quota.value) : undefined;
  if (!words) return null;
  return (
    <p role="status" aria-label="Queries left" className="small">
      {words}
    </p>
  );
}

export function ConnectionScreen() {
  const connection = useAppStore((s) => s.connection);
  const appInfo = useAppStore((s) => s.appInfo);
  const action = useAppStore((s) => s.connectionAction);
  const testConnection = useAppStore((s) => s.testConnection);
  const saveConnection = useAppStore((s) => s.saveConnection);
  const clearKey = useAppStore((s) => s.clearKey);
  const [kind, setKind] = useState<'embedded' | 'provider'>(connection?.kind ?? 'embedded');
  const [baseUrl, setBaseUrl] = useState(connection?.provider?.baseUrl ?? '');
  const [apiKey, setApiKey] = useState('');
  const [allowPlainHttp, setAllowPlainHttp] = useState(connection?.provider?.allowPlainHttp ?? false);

  useEffect(() => {
    if (action.status === 'saved') setApiKey('');
  }, [action.status]);

  if (!connection) return null;
  const plainHttpHost = plainHttpHostOf(baseUrl.trim());
  const input: ConnectionInput =
    kind === 'embedded'
      ? { kind }
      : {
          kind,
          baseUrl: baseUrl.trim(),
          ...(apiKey.trim() ? { apiKey: apiKey.trim() } : {}),
          ...(plainHttpHost !== undefined && allowPlainHttp ? { allowPlainHttp: true } : {}),
        };
  const isWorking = action.status === 'working';
  const embedded = connection.embedded;
  const embeddedText =
    embedded.state === 'running'
      ? 'Running on this computer, with the checks chosen below.'
      : embedded.state === 'starting'
        ? 'Starting…'
        : embedded.state === 'failed'
          ? (embedded.message ?? 'It failed to start.')
          : 'Not running: it starts when a job or a verification needs it. Works offline, with no account.';
  return (
    <section className="screen narrow" aria-labelledby="connection-heading">
      <header className="screen-head">
        <h1 id="connection-heading">Connection</h1>
        <p className="muted">
          Where lists are cleaned: the local service on this computer, or a provider’s service with an API
          key.
        </p>
      </header>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void saveConnection(input);
        }}
      >
        <fieldset className="choice">
          <legend>Service</legend>
          <label className="radio card">
            <input
              type="radio"
              name="kind"
              value="embedded"
              checked={kind === 'embedded'}
              onChange={() => setKind('embedded')}
            />
            <span>
              <strong>Local service</strong> (default, works offline)
              <span className="muted small block">{embeddedText}</span>
            </span>
          </label>
          <label className="radio card">
            <input
              type="radio"
              name="kind"
              value="provider"
              checked={kind === 'provider'}
              onChange={() => setKind('provider')}
            />
            <span>
              <strong>Provider’s service</strong>
              <span className="muted small block">
                DNS and mailbox checks, intelligence and identity data, as your key allows.
              </span>
            </span>
          </label>
        </fieldset>
        {kind === 'provider' ? (
          <fieldset className="provider-fields">
            <legend>Provider</legend>
            <label htmlFor="base-url">Service address</label>
            <input
              id="base-url"
              type="url"
              placeholder="https://api.example.com"
              value={baseUrl}
              autoComplete="off"
              spellCheck={false}
              onChange={(event) => setBaseUrl(event.target.value)}
            />
            {plainHttpHost !== undefined ? (
              <PlainHttpSetting
                host={plainHttpHost}
                isAllowed={allowPlainHttp}
                onChange={setAllowPlainHttp}
              />
            ) : null}
            <label htmlFor="api-key">API key</label>
            <input
              id="api-key"
              type="password"
              autoComplete="off"
              spellCheck={false}
              placeholder={
                connection.provider?.keyMask
                  ? `Stored: ${connection.provider.keyMask} (leave empty to keep it)`
                  : 'Paste the key'
              }
              value={apiKey}
              onChange={(event) => setApiKey(event.target.value)}
              disabled={!connection.vault.isAvailable}
              aria-describedby="key-help"
            />
            <p id="key-help" className="muted small">
              {connection.vault.isAvailable
                ? connection.vault.storage === 'safeStorage'
                  ? 'The key is encrypted by your system’s keyring and never shown again; only its last 4 characters are.'
                  : 'The key is kept in a file only your user account can read, and never shown again; only its last 4 characters are.'
                : connection.vault.message}
            </p>
            <ProviderServices isProviderInUse={connection.kind === 'provider'} />
            {connection.provider?.keyMask ? (
              <p>
                Stored key: <code>{connection.provider.keyMask}</code>{' '}
                <button
                  type="button"
                  className="small-button"
                  onClick={() => void clearKey()}
                  disabled={isWorking}
                >
                  Clear key
                </button>
              </p>
            ) : null}
            {connection.kind === 'provider' && connection.provider?.keyMask ? <SavedKeyQuota /> : null}
          </fieldset>
        ) : null}
        <div aria-live="polite">
          {action.status === 'failed' ? (
            <p className="error" role="alert">
              {action.error}
            </p>
          ) : null}
          {action.status === 'tested' ? (
            <p className="success" role="status">
              The test call worked ({action.value.latencyMs} ms; the key answers in{' '}
              {action.value.mode === 'safe_to_send' ? 'safe-to-send' : 'legacy validation'} mode).
              {kind === 'provider' && keyQuotaWords(action.value.quota)
                ? ` ${keyQuotaWords(action.value.quota)}`
                : null}
            </p>
          ) : null}
          {action.status === 'saved' ? (
            <p className="success" role="status">
              Saved. New jobs use this connection.
            </p>
          ) : null}
        </div>
        <div className="actions">
          <button type="button" disabled={isWorking} onClick={() => void testConnection(input)}>
            {isWorking && action.what === 'test' ? 'Testing…' : 'Test connection'}
          </button>
          <button type="submit" className="primary" disabled={isWorking}>
            {isWorking && action.what === 'save' ? 'Checking and saving…' : 'Save'}
          </button>
        </div>
        <p className="muted small">A provider connection is checked with a test call before it is saved.</p>
      </form>
      {kind === 'embedded' ? <ChecksSetting /> : null}
      {appInfo ? (
        <p className="muted small about">
          Mailsieve {appInfo.version} · {appInfo.mode === 'electron' ? 'desktop app' : 'browser mode'} · data
          in {appInfo.home}
        </p>
      ) : null}
    </section>
  );
}
