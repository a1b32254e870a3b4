// The checks setting of the local service (issue #11, docs/online-checks.md): the user's choice, kept in the
// history DB's settings (the SOCKS5 proxy's password in the secret store, like API keys), the network
// overrides of the environment (MAILSIEVE_DNS_SERVERS, MAILSIEVE_SMTP_PORT), the preflight (the `doctor`
// logic: does DNS answer from a resolver that sees the internet, can a mail server's port 25 be reached),
// and what the embedded service is started with. Automatic resolves to domain checks when the preflight
// finds DNS answering, else to offline checks, and says why.
import {
  createOnlineVerifier,
  parseDnsServers,
  type ChecksLevel,
  type DnsServer,
  type Preflight,
} from '../../service/engine/online/index.js';
import type { OnlineServiceOptions } from '../../service/http/app.js';
import {
  checksInputSchema,
  type ChecksChoice,
  type ChecksInfo,
  type ChecksPreflight,
  type SmtpProxy,
} from '../../shared/desktop/checks.js';
import { getSetting, setSetting, type HistoryDb } from './history/db.js';
import type { SecretStore } from './secrets.js';

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

/** The resolver and port the environment sets for the app (corporate resolvers, tests). */
export interface NetworkOverrides {
  readonly dnsServers: readonly DnsServer[] | null;
  readonly dnsServersText: string | null;
  readonly smtpPort: number | null;
}

export class ChecksSettingProblem extends Error {
  readonly code = 'invalid-input';
}

/** Reads `MAILSIEVE_DNS_SERVERS` (HOST:PORT[,…]) and `MAILSIEVE_SMTP_PORT`; a bad value is said in words. */
export function networkOverrides(env: NodeJS.ProcessEnv = process.env): NetworkOverrides {
  const dnsText = env.MAILSIEVE_DNS_SERVERS?.trim() || null;
  const portText = env.MAILSIEVE_SMTP_PORT?.trim() || null;
  let dnsServers: readonly DnsServer[] | null = null;
  if (dnsText !== null) {
    const parsed = parseDnsServers(dnsText);
    if (!parsed.ok)
      throw new ChecksSettingProblem(
        `MAILSIEVE_DNS_SERVERS takes IP[:PORT] entries separated by commas; '${parsed.bad}' is not one.`,
      );
    dnsServers = parsed.servers;
  }
  let smtpPort: number | null = null;
  if (portText !== null) {
    const port = Number(portText);
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new ChecksSettingProblem(`MAILSIEVE_SMTP_PORT takes a port from 1 to 65535; got '${portText}'.`);
    smtpPort = port;
  }
  return { dnsServers, dnsServersText: dnsText, smtpPort };
}

/** The preflight's findings in one sentence, as the Connection screen shows them. */
export function describePreflight(preflight: Preflight, port: number): string {
  const portWords = port === 25 ? 'port 25' : `port ${port}`;
  if (!preflight.dns.ok)
    return 'DNS does not answer from here: domain and mailbox checks would come back unknown, so Automatic checks offline.';
  if (preflight.smtp.ok)
    return `DNS answers; ${portWords} of mail servers can be reached: mailbox checks can run.`;
  if (/^Not tried/.test(preflight.smtp.detail))
    return `DNS answers; ${portWords} was not tried (${preflight.smtp.detail.replace(/^Not tried: /, '').replace(/\.$/, '')}).`;
  return `DNS answers; ${portWords} is blocked by this network: mailbox checks would come back unknown.`;
}

export interface ChecksPlan {
  /** The level the service runs. */
  readonly level: ChecksLevel;
  /** Why, in words ("Automatic: DNS answers, checking domains"). */
  readonly reason: string;
  /** The embedded service's online settings. */
  readonly online: OnlineServiceOptions;
}

export interface ChecksSetting {
  stored(): StoredChecks;
  info(running: { level: ChecksLevel; reason: string } | null, isRestartPending: boolean): ChecksInfo;
  /** Validates and stores a new choice; the password goes to the secret store. */
  save(input: unknown): StoredChecks;
  /** Runs a fresh preflight with the stored settings (within a few seconds, whatever the network does). */
  preflight(): Promise<ChecksPreflight>;
  /** What the embedded service is started with: Automatic runs the preflight first. */
  plan(): Promise<ChecksPlan>;
}

export function createChecksSetting(options: {
  readonly db: HistoryDb;
  readonly secrets: SecretStore;
  readonly env?: NodeJS.ProcessEnv;
}): ChecksSetting {
  const { db, secrets } = options;
  let lastPreflight: ChecksPreflight | null = null;

  const stored = (): StoredChecks => ({ ...DEFAULT_CHECKS, ...getSetting<StoredChecks>(db, CHECKS_SETTING) });
  const overrides = () => networkOverrides(options.env ?? process.env);

  /** The verifier settings of the choice (no level: the caller sets it). */
  function onlineSettings(choice: StoredChecks): OnlineServiceOptions {
    const network = overrides();
    const password = secrets.availability.isAvailable ? secrets.get(PROXY_PASSWORD_SECRET) : undefined;
    return {
      ...(network.dnsServers ? { dnsServers: network.dnsServers } : {}),
      ...(network.smtpPort !== null ? { smtpPort: network.smtpPort } : {}),
      ...(choice.heloName ? { heloName: choice.heloName } : {}),
      ...(choice.mailFrom ? { mailFrom: choice.mailFrom } : {}),
      ...(choice.proxy
        ? {
            smtpProxy: {
              host: choice.proxy.host,
              port: choice.proxy.port,
              ...(choice.proxy.user ? { userId: choice.proxy.user } : {}),
              ...(choice.proxy.user && password ? { password } : {}),
            },
          }
        : {}),
    };
  }

  async function runPreflight(choice: StoredChecks): Promise<ChecksPreflight> {
    // The doctor's limits: DNS gets 3 s, a mail server's greeting 3 s; nothing here can hang.
    const verifier = createOnlineVerifier({ ...onlineSettings(choice), dnsQueryTimeoutMs: 3000 });
    try {
      const preflight = await verifier.preflight({ fresh: true });
      const result: ChecksPreflight = {
        dns: { ...preflight.dns, servers: [...preflight.dns.servers] },
        smtp: { ...preflight.smtp, throughProxy: choice.proxy !== null },
        checkedAt: preflight.checkedAt,
        summary: describePreflight(preflight, preflight.smtp.port),
      };
      lastPreflight = result;
      return result;
    } finally {
      await verifier.close();
    }
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
      const network = overrides();
      return {
        choice: choice.choice,
        heloName: choice.heloName,
        mailFrom: choice.mailFrom,
        defaults: defaultsOf(),
        proxy: choice.proxy ? { ...choice.proxy, hasPassword: secrets.has(PROXY_PASSWORD_SECRET) } : null,
        overrides: { dnsServers: network.dnsServersText, smtpPort: network.smtpPort },
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
    async plan() {
      const choice = stored();
      const settings = onlineSettings(choice);
      if (choice.choice === 'offline')
        return {
          level: 'offline',
          reason:
            'Offline only: syntax, typos, role accounts and domain types; DNS and mail servers are not asked.',
          online: { ...settings, checks: 'offline' },
        };
      if (choice.choice === 'dns')
        return {
          level: 'dns',
          reason: 'Domains (DNS): each domain’s mail routing is asked of DNS; mailboxes are not asked.',
          online: { ...settings, checks: 'dns' },
        };
      if (choice.choice === 'smtp')
        return {
          level: 'smtp',
          reason: `Mailboxes (SMTP): each domain’s mail routing is asked of DNS and each mailbox of its mail server${choice.proxy ? ` (through the SOCKS5 proxy ${choice.proxy.host}:${choice.proxy.port})` : ''}.`,
          online: { ...settings, checks: 'smtp' },
        };
      const preflight = await runPreflight(choice);
      return preflight.dns.ok
        ? {
            level: 'dns',
            reason: 'Automatic: DNS answers, checking domains (choose Mailboxes (SMTP) to ask mail servers).',
            online: { ...settings, checks: 'dns' },
          }
        : {
            level: 'offline',
            reason: `Automatic: checking offline, because DNS does not answer from here (${preflight.dns.detail.replace(/ DNS and SMTP checks will end as unknown \(5\)\.$/, '')}).`,
            online: { ...settings, checks: 'offline' },
          };
    },
  };
}
