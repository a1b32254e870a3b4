// The checks setting of the local service (issue #11, docs/online-checks.md): the user's choice, kept in the
// history DB's settings (the SOCKS5 proxy's password in the secret store, like API keys), the network
// overrides of the environment (MAILSIEVE_DNS_SERVERS, MAILSIEVE_SMTP_PORT), the preflight (the `doctor`
// logic: does DNS answer from a resolver that sees the internet, can a mail server's port 25 be reached),
// and what the embedded service is started with. Automatic resolves to domain checks when the preflight
// finds DNS answering, else to offline checks, and says why.
import { createOnlineVerifier, type ChecksLevel } from '../../../service/engine/online/index.js';
import {
  checksInputSchema,
  type ChecksChoice,
  type ChecksInfo,
  type ChecksPreflight,
  type SmtpProxy,
} from '../../../shared/desktop/checks.js';
import {
  describePreflight,
  effectiveNetwork,
  ENV_DNS_SERVERS,
  ENV_SMTP_PORT,
  preflightNetwork,
  type NetworkSettings,
} from './level.js';
import { getSetting, setSetting, type HistoryDb } from '../history/db.js';
import { heloNameProblem, senderDomainProblem } from '../../../shared/verifierIdentity.js';
import type { SecretStore } from '../secrets.js';

/**
 * Why the HELO name and sender (empty: the defaults) would be refused by many mail servers, in the words the
 * Connection screen shows; undefined when they can pass.
 */
export function identityProblem(
  heloName: string,
  mailFrom: string,
  defaults: { heloName: string; mailFrom: string },
): string | undefined {
  const helo = heloName || defaults.heloName;
  const sender = mailFrom || (heloName ? `postmaster@${heloName}` : defaults.mailFrom);
  const heloWhy = heloNameProblem(helo);
  const senderWhy = senderDomainProblem(sender);
  if (!heloWhy && !senderWhy) return undefined;
  const why = [
    heloWhy
      ? `the HELO name '${helo}' ${heloName ? '' : '(this computer’s name) '}is refused by many mail servers: ${heloWhy}`
      : '',
    senderWhy ? `the sender ${sender} is refused by many mail servers: ${senderWhy}` : '',
  ].filter(Boolean);
  return `Mailboxes (SMTP) needs a HELO name and a sender that mail servers accept: ${why.join('; ')}. Enter a fully-qualified HELO name whose DNS points at this computer’s address and a sender address of a domain you own.`;
}

/** The setting holding the choice (history DB). */
export const CHECKS_SETTING = 'checks';
/** The secret name of the SOCKS5 proxy's password. */
export const PROXY_PASSWORD_SECRET = 'smtp-proxy-password';

export interface StoredChecks {
  readonly choice: ChecksChoice;
  readonly heloName: string;
  readonly mailFrom: string;
  readonly proxy: SmtpProxy | null;
}

const DEFAULT_CHECKS: StoredChecks = { choice: 'auto', heloName: '', mailFrom: '', proxy: null };

export class ChecksSettingProblem extends Error {
  readonly code = 'invalid-input';
}

export interface ChecksSetting {
  stored(): StoredChecks;
  info(running: { level: ChecksLevel; reason: string } | null, isRestartPending: boolean): ChecksInfo;
  /** Validates and stores a new choice; the password goes to the secret store. */
  save(input: unknown): StoredChecks;
  /** Runs a fresh preflight with the stored settings (within a few seconds, whatever the network does). */
  preflight(): Promise<ChecksPreflight>;
  /** The network settings the embedded service is started with (the proxy's password included). */
  network(): NetworkSettings;
}

export function createChecksSetting(options: {
  readonly db: HistoryDb;
  readonly secrets: SecretStore;
  readonly env?: NodeJS.ProcessEnv;
}): ChecksSetting {
  const { db, secrets } = options;
  let lastPreflight: ChecksPreflight | null = null;

  const stored = (): StoredChecks => ({ ...DEFAULT_CHECKS, ...getSetting<StoredChecks>(db, CHECKS_SETTING) });
  const env = () => options.env ?? process.env;

  /** HELO name, MAIL FROM and proxy of the choice, over MAILSIEVE_DNS_SERVERS / MAILSIEVE_SMTP_PORT. */
  function networkOf(choice: StoredChecks): NetworkSettings {
    const password = secrets.availability.isAvailable ? secrets.get(PROXY_PASSWORD_SECRET) : undefined;
    return effectiveNetwork(
      {
        ...(choice.heloName ? { heloName: choice.heloName } : {}),
        ...(choice.mailFrom ? { mailFrom: choice.mailFrom } : {}),
        ...(choice.proxy
          ? {
              smtpProxy: {
                host: choice.proxy.host,
                port: choice.proxy.port,
                ...(choice.proxy.user ? { user: choice.proxy.user } : {}),
                ...(choice.proxy.user && password ? { password } : {}),
              },
            }
          : {}),
      },
      env(),
    );
  }

  async function runPreflight(choice: StoredChecks): Promise<ChecksPreflight> {
    let network: NetworkSettings;
    try {
      network = networkOf(choice);
    } catch (error) {
      throw new ChecksSettingProblem((error as Error).message);
    }
    const preflight = await preflightNetwork(network);
    const result: ChecksPreflight = {
      dns: { ...preflight.dns, servers: [...preflight.dns.servers] },
      smtp: { ...preflight.smtp, throughProxy: choice.proxy !== null },
      identity: {
        ok: preflight.identity.ok,
        detail: preflight.identity.detail,
        problems: preflight.identity.problems.map(({ text, option }) => ({ text, option })),
      },
      checkedAt: preflight.checkedAt,
      summary: describePreflight(preflight, network.smtpProxy),
    };
    lastPreflight = result;
    return result;
  }

  const defaultsOf = () => {
    const verifier = createOnlineVerifier({ dnsServers: [] });
    const { heloName, mailFrom } = verifier.settings;
    void verifier.close();
    return { heloName, mailFrom };
  };

  return {
    stored,
    info(running, isRestartPending) {
      const choice = stored();
      const smtpPort = Number(env()[ENV_SMTP_PORT]?.trim() || NaN);
      return {
        choice: choice.choice,
        heloName: choice.heloName,
        mailFrom: choice.mailFrom,
        defaults: defaultsOf(),
        proxy: choice.proxy
          ? { ...choice.proxy, isProxyAuthStored: secrets.has(PROXY_PASSWORD_SECRET) }
          : null,
        overrides: {
          dnsServers: env()[ENV_DNS_SERVERS]?.trim() || null,
          smtpPort: Number.isInteger(smtpPort) ? smtpPort : null,
        },
        preflight: lastPreflight,
        running: running ? { level: running.level, reason: running.reason } : null,
        isRestartPending,
      };
    },
    save(input) {
      const parsed = checksInputSchema.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new ChecksSettingProblem(issue ? issue.message : 'Invalid checks setting.');
      }
      const value = parsed.data;
      if (value.choice === 'smtp') {
        // Mailbox checks with an identity mail servers refuse would bring back nothing but unknown rows: the
        // choice waits for a HELO name and a sender that can pass (the screen asks for them, with this reason).
        const problem = identityProblem(value.heloName, value.mailFrom, defaultsOf());
        if (problem) throw new ChecksSettingProblem(problem);
      }
      if (value.proxyPassword !== undefined) {
        if (value.proxyPassword === '' || value.proxy === null) secrets.delete(PROXY_PASSWORD_SECRET);
        else secrets.set(PROXY_PASSWORD_SECRET, value.proxyPassword);
      } else if (value.proxy === null) secrets.delete(PROXY_PASSWORD_SECRET);
      const next: StoredChecks = {
        choice: value.choice,
        heloName: value.heloName,
        mailFrom: value.mailFrom,
        proxy: value.proxy,
      };
      setSetting(db, CHECKS_SETTING, next);
      lastPreflight = null;
      return next;
    },
    preflight: () => runPreflight(stored()),
    network: () => networkOf(stored()),
  };
}
