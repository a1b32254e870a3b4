// `mailsieve doctor`: can this machine run online checks? Whether DNS answers (and sees the internet), whether
// a mail server's port 25 can be reached, with a probe domain's MX as the test, and whether that server takes
// this machine's identity: a real conversation (EHLO with the HELO name, MAIL FROM the sender, RCPT TO its
// postmaster, RSET, QUIT) that says which step was refused and which option to set. It answers within a few
// seconds whatever the network does, and says what the user will see: online checks that end as unknown (5)
// when the network or the identity does not allow them. With --source-address it checks that address as mail
// servers will (its reverse DNS, the HELO name, the block lists of --dnsbl) and leaves from it; a listed address
// makes it exit non-zero.
import { createOnlineVerifier, describeProblems, type Preflight } from '../../service/engine/online/index.js';
import { CLI_OPTION_WORDS } from '../../shared/unknownCauses.js';
import { checkSourceAddress, type AddressCheck } from '../../service/engine/online/addressCheck.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { blockListsMetSince, type BlockListRecord } from '../../service/store/blockLists.js';
import { openServiceDb, SERVICE_DB_FILE } from '../../service/store/db.js';
import { CliError } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';
import { dnsblFrom, selfCheckLines, type SelfCheckCliOptions } from './selfCheck.js';
import { nodeOptionsFrom } from './teamOptions.js';

export interface DoctorOptions extends OnlineCliOptions, SelfCheckCliOptions {
  json?: boolean;
  sourceAddress?: string;
  /** The service data folder whose recent mailbox checks are read for the block lists they met. */
  dataDir?: string;
}

/** How far back the block lists met by this machine's mailbox checks are told. */
const BLOCK_LISTS_DAYS = 30;

/**
 * The block lists this machine's recent mailbox checks met (kept by the service in its data folder as they
 * happen): none when the folder has no store yet. Read without creating or migrating anything.
 */
function blockListsMet(dataDir: string | undefined, now = Date.now()): BlockListRecord[] {
  if (!dataDir || !existsSync(join(dataDir, SERVICE_DB_FILE))) return [];
  const db = openServiceDb(dataDir);
  try {
    return blockListsMetSince(db, new Date(now - BLOCK_LISTS_DAYS * 86_400_000).toISOString());
  } finally {
    db.close();
  }
}

/** The block lists line: each list met, from which address, when, and what the server said. */
export function formatBlockLists(met: readonly BlockListRecord[]): string {
  if (met.length === 0)
    return `${'Blocks'.padEnd(8)} ok    No mailbox check from this machine met a block list in the last ${BLOCK_LISTS_DAYS} days.`;
  const day = (iso: string) => iso.slice(0, 10);
  return [
    `${'Blocks'.padEnd(8)} FAIL  Mailbox checks from this machine were refused for block lists: their rows came back unknown (5).`,
    ...met.map(
      (m) =>
        `         ${m.list}: from ${m.source || 'the default address'}, ${m.times === 1 ? 'once' : `${m.times} times`} ${day(m.firstAt) === day(m.lastAt) ? `on ${day(m.lastAt)}` : `from ${day(m.firstAt)} to ${day(m.lastAt)}`} — ${m.host} said "${m.reply}"`,
    ),
  ].join('\n');
}

/** The address lines: the verdict, then what was found and each problem with what to do. */
export function formatAddressCheck(check: AddressCheck): string {
  const status = check.is_listed ? 'FAIL' : check.ok ? 'ok  ' : 'WARN';
  const verdict = check.is_listed
    ? `${check.address} is on a DNS block list: mail servers that use it refuse this machine.`
    : check.ok
      ? `${check.address}: reverse DNS confirmed${check.helo?.matches ? ' and the HELO name matches' : ''}; not listed.`
      : `${check.address} is not listed, but mail servers may distrust it (see below).`;
  return [
    `${'Address'.padEnd(8)} ${status}  ${verdict}`,
    ...selfCheckLines(check).map((line) => `         ${line}`),
  ].join('\n');
}

/** The identity line's words: each problem with the option that changes it. */
function identityWords(preflight: Preflight): string {
  const { identity } = preflight;
  if (identity.problems.length === 0) return identity.detail;
  const problems = describeProblems(identity.problems, CLI_OPTION_WORDS);
  return preflight.smtp.ok ? problems : `Not tried: no mail server could be reached. ${problems}`;
}

export function formatPreflight(preflight: Preflight): string {
  const line = (name: string, ok: boolean, detail: string) =>
    `${name.padEnd(8)} ${ok ? 'ok  ' : 'FAIL'}  ${detail}`;
  const { dns, smtp, identity } = preflight;
  const options = [...new Set(identity.problems.map((p) => CLI_OPTION_WORDS[p.option]))].join(', ');
  const verdict =
    dns.ok && smtp.ok && identity.ok
      ? 'Mailbox checks can run here: keys with --checks smtp get mailbox answers.'
      : dns.ok && smtp.ok
        ? `Mailbox (SMTP) checks would come back unknown (5) from mail servers that refuse this identity: ${options}. DNS checks can run (--checks dns).`
        : dns.ok
          ? 'DNS checks can run here (--checks dns); mailbox (SMTP) checks would end as unknown (5).'
          : 'No online checks can run here: DNS and SMTP checks would end as unknown (5). Offline checks work.';
  return [
    line('DNS', dns.ok, dns.detail),
    line('SMTP', smtp.ok, smtp.detail),
    line('Identity', identity.ok, identityWords(preflight)),
    verdict,
  ].join('\n');
}

/** Exits 0 when DNS, SMTP and the identity all work, 1 otherwise (the report on stdout says which and why). */
export async function doctor(options: DoctorOptions): Promise<void> {
  const { checks: _checks, ...settings } = onlineOptionsFrom(options, 'smtp');
  const { sourceAddress } = nodeOptionsFrom({
    ...(options.sourceAddress !== undefined ? { sourceAddress: options.sourceAddress } : {}),
  });
  const dnsbl = dnsblFrom(options);
  const verifier = createOnlineVerifier({
    ...settings,
    ...(sourceAddress ? { sourceAddress } : {}),
    dnsQueryTimeoutMs: 3000,
  });
  try {
    const [preflight, address] = await Promise.all([
      verifier.preflight({ fresh: true }),
      sourceAddress
        ? checkSourceAddress({
            address: sourceAddress,
            heloName: verifier.settings.heloName,
            dnsServers: settings.dnsServers,
            dnsbl,
          })
        : undefined,
    ]);
    const { transcript: _transcript, ...identity } = preflight.identity;
    // What this machine's own recent checks met: a server that refuses relaying answers the probe before any
    // block list is looked at, so the probe alone would call a listed machine fine.
    const met = blockListsMet(options.dataDir);
    const json = {
      dns: preflight.dns,
      smtp: preflight.smtp,
      identity,
      ...(address ? { address } : {}),
      block_lists_met: met,
      checked_at: preflight.checkedAt,
    };
    const text = [
      formatPreflight(preflight),
      ...(address ? [formatAddressCheck(address)] : []),
      formatBlockLists(met),
    ].join('\n');
    process.stdout.write(`${options.json ? JSON.stringify(json) : text}\n`);
    if (address?.is_listed)
      throw new CliError(
        `the source address ${address.address} is listed on ${address.block_lists
          .filter((list) => list.status === 'listed')
          .map((list) => list.zone)
          .join(', ')}: use another address or ask for its removal (see above).`,
      );
    if (met.length > 0)
      throw new CliError(
        `mail servers refused this machine's recent mailbox checks for ${met.map((m) => m.list).join(', ')} (see above): use another source address (--source-address) or ask for its removal.`,
      );
    if (!preflight.dns.ok) throw new CliError('online checks cannot run here (see above).');
    if (!preflight.smtp.ok) throw new CliError('SMTP checks cannot run here (see above).');
    if (!preflight.identity.ok)
      throw new CliError(
        `mail servers refuse or may refuse this machine's identity: ${[...new Set(preflight.identity.problems.map((p) => CLI_OPTION_WORDS[p.option]))].join(', ')} (see above).`,
      );
  } finally {
    await verifier.close();
  }
}
