// The checks setting of the local service (issue #11): how far the embedded service's verifications go —
// Automatic (domains when DNS answers, else offline), Offline only, Domains (DNS), Mailboxes (SMTP) — how the
// mail servers are asked (HELO name, MAIL FROM, an optional SOCKS5 proxy), and what the network allows (the
// preflight). Secrets: the proxy's password travels one way only, in `checks:set`; answers say whether one
// is stored (`isProxyAuthStored`), never what it is.
import { z } from 'zod';
import { CAUSE_OPTIONS } from '../unknownCauses.js';

/** The user's choice. `auto` is resolved to one of the levels by a preflight when the service starts. */
export const CHECKS_CHOICES = ['auto', 'offline', 'dns', 'smtp'] as const;
export type ChecksChoice = (typeof CHECKS_CHOICES)[number];
/** What the service runs. */
export const CHECKS_LEVELS = ['offline', 'dns', 'smtp'] as const;
export type ChecksLevelName = (typeof CHECKS_LEVELS)[number];

/** The words of each choice: the accessible names of the radio buttons start with these. */
export const CHECKS_CHOICE_TITLES: Readonly<Record<ChecksChoice, string>> = {
  auto: 'Automatic',
  offline: 'Offline only',
  dns: 'Domains (DNS)',
  smtp: 'Mailboxes (SMTP)',
};

/** A job's level in a few words (History's column). */
export const CHECKS_LEVEL_SHORT: Readonly<Record<ChecksLevelName | 'provider', string>> = {
  offline: 'offline',
  dns: 'DNS',
  smtp: 'SMTP',
  provider: 'provider',
};

/** A level's name in words (the sidebar's "Local service: running (mailbox checks)", Progress). */
export const CHECKS_LEVEL_NAMES: Readonly<Record<ChecksLevelName | 'provider', string>> = {
  offline: 'offline checks',
  dns: 'domain checks',
  smtp: 'mailbox checks',
  provider: 'the provider’s checks',
};

/** How a job's level reads on Results and in History. */
export const CHECKS_LEVEL_WORDS: Readonly<Record<ChecksLevelName | 'provider', string>> = {
  offline: `${CHECKS_LEVEL_NAMES.offline} (syntax, typos, role accounts, domain types)`,
  dns: `${CHECKS_LEVEL_NAMES.dns} (DNS: mail routing of each domain)`,
  smtp: `${CHECKS_LEVEL_NAMES.smtp} (SMTP: each mailbox asked of its mail server)`,
  provider: CHECKS_LEVEL_NAMES.provider,
};

/**
 * Why a job ran at its level, as a person says it: "No internet connection was found, so only syntax and lists
 * were checked." The recorded reason speaks in the service's terms (`auto: 127.0.0.1:53 answers, but says even
 * the top-level domain .com does not exist: …`): it stays for the job's details and the CLI's `--json`. It
 * begins with the choice that decided the level (electron/core/checks/level.ts), which is all this reads of it.
 */
export function checksInPlainWords(checks: {
  readonly level: JobChecks['level'];
  readonly reason: string;
}): string {
  const choice = /^(auto|offline|dns|smtp):/.exec(checks.reason)?.[1];
  const isChosen = choice !== undefined && choice !== 'auto' && /^\w+: chosen/.test(checks.reason);
  switch (checks.level) {
    case 'offline':
      if (choice === 'auto')
        return 'No internet connection was found, so only syntax and lists were checked.';
      return isChosen
        ? `Checks were set to ${CHECKS_CHOICE_TITLES.offline}, so only syntax and lists were checked.`
        : 'Only syntax and lists were checked.';
    case 'dns':
      return choice === 'auto'
        ? 'An internet connection was found, so each domain’s mail servers were looked up.'
        : `Checks were set to ${CHECKS_CHOICE_TITLES.dns}, so each domain’s mail servers were looked up.`;
    case 'smtp':
      return `Checks were set to ${CHECKS_CHOICE_TITLES.smtp}, so each mailbox was asked of its mail server.`;
    case 'provider':
      return 'The provider’s service checked the addresses as your key allows.';
  }
}

const hostSchema = z
  .string()
  .trim()
  .min(1, 'Enter the proxy’s host')
  .max(253)
  .regex(/^[A-Za-z0-9.:[\]-]+$/, 'Enter a host name or IP address');

export const smtpProxySchema = z.object({
  host: hostSchema,
  port: z.number().int().min(1, 'The port is 1 to 65535').max(65535, 'The port is 1 to 65535'),
  user: z.string().trim().max(255).default(''),
});
export type SmtpProxy = z.infer<typeof smtpProxySchema>;

export const heloNameSchema = z
  .string()
  .trim()
  .max(253)
  .refine(
    (value) =>
      value === '' ||
      /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/.test(value) ||
      /^\[[0-9a-fA-F:.]+\]$/.test(value),
    'Enter a host name (or [IP]) for HELO',
  );
export const mailFromSchema = z
  .string()
  .trim()
  .max(320)
  .refine(
    (value) => value === '' || /^[^\s<>@"]+@[A-Za-z0-9.-]+$/.test(value),
    'Enter a plain address such as verify@example.com',
  );

export const checksInputSchema = z.object({
  choice: z.enum(CHECKS_CHOICES),
  /** Empty: the default (this machine's name). */
  heloName: heloNameSchema.default(''),
  /** Empty: the default (postmaster@<HELO name>). */
  mailFrom: mailFromSchema.default(''),
  /** Null: no proxy. */
  proxy: smtpProxySchema.nullable().default(null),
  /** The proxy's password: omitted keeps the stored one, '' removes it. */
  proxyPassword: z.string().max(512).optional(),
});
export type ChecksInput = z.input<typeof checksInputSchema>;

export const preflightCheckSchema = z.object({ ok: z.boolean(), detail: z.string() });

export const checksPreflightSchema = z.object({
  dns: preflightCheckSchema.extend({ servers: z.array(z.string()) }),
  smtp: preflightCheckSchema.extend({ port: z.number(), throughProxy: z.boolean() }),
  /** Whether a mail server of the probe domain took the HELO name and the sender (EHLO, MAIL FROM, RCPT). */
  identity: preflightCheckSchema.extend({
    problems: z.array(z.object({ text: z.string(), option: z.enum(CAUSE_OPTIONS) })),
  }),
  checkedAt: z.string(),
  /** The findings in one sentence ("DNS answers; port 25 is blocked by this network: …"). */
  summary: z.string(),
});
export type ChecksPreflight = z.infer<typeof checksPreflightSchema>;

export const checksInfoSchema = z.object({
  choice: z.enum(CHECKS_CHOICES),
  heloName: z.string(),
  mailFrom: z.string(),
  /** What an empty HELO name / MAIL FROM stands for. */
  defaults: z.object({ heloName: z.string(), mailFrom: z.string() }),
  proxy: smtpProxySchema.extend({ isProxyAuthStored: z.boolean() }).nullable(),
  /** `MAILSIEVE_DNS_SERVERS` / `MAILSIEVE_SMTP_PORT`, when set for this app. */
  overrides: z.object({ dnsServers: z.string().nullable(), smtpPort: z.number().nullable() }),
  /** The last preflight, when one ran. */
  preflight: checksPreflightSchema.nullable(),
  /** What the running local service checks, and why; null while it is not running. */
  running: z.object({ level: z.enum(CHECKS_LEVELS), reason: z.string() }).nullable(),
  /** The choice changed while local jobs run: the service takes it up once they finish. */
  isRestartPending: z.boolean(),
});
export type ChecksInfo = z.infer<typeof checksInfoSchema>;

/** What a job ran with: the level and the words why (Results and History say it). */
export const jobChecksSchema = z.object({
  level: z.enum([...CHECKS_LEVELS, 'provider']),
  reason: z.string(),
});
export type JobChecks = z.infer<typeof jobChecksSchema>;
