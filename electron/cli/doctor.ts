// `mailsieve doctor`: can this machine run online checks? Whether DNS answers (and sees the internet), and
// whether a mail server's port 25 can be reached, with a probe domain's MX as the test. It answers within
// a few seconds whatever the network does, and says what the user will see: online checks that end as
// unknown (5) when the network does not allow them.
import { createOnlineVerifier, type Preflight } from '../../service/engine/online/index.js';
import { CliError } from './errors.js';
import { onlineOptionsFrom, type OnlineCliOptions } from './onlineOptions.js';

export interface DoctorOptions extends OnlineCliOptions {
  json?: boolean;
}

export function formatPreflight(preflight: Preflight): string {
  const line = (name: string, ok: boolean, detail: string) =>
    `${name.padEnd(5)} ${ok ? 'ok  ' : 'FAIL'}  ${detail}`;
  const verdict =
    preflight.dns.ok && preflight.smtp.ok
      ? 'Online checks can run here: keys with --checks smtp get mailbox answers.'
      : preflight.dns.ok
        ? 'DNS checks can run here (--checks dns); mailbox (SMTP) checks would end as unknown (5).'
        : 'No online checks can run here: DNS and SMTP checks would end as unknown (5). Offline checks work.';
  return [
    line('DNS', preflight.dns.ok, preflight.dns.detail),
    line('SMTP', preflight.smtp.ok, preflight.smtp.detail),
    verdict,
  ].join('\n');
}

/** Exits 0 when DNS and SMTP both work, 1 otherwise (the report on stdout says which and why). */
export async function doctor(options: DoctorOptions): Promise<void> {
  const { checks: _checks, ...settings } = onlineOptionsFrom(options, 'smtp');
  const verifier = createOnlineVerifier({ ...settings, dnsQueryTimeoutMs: 3000 });
  try {
    const preflight = await verifier.preflight({ fresh: true });
    const json = { dns: preflight.dns, smtp: preflight.smtp, checked_at: preflight.checkedAt };
    process.stdout.write(`${options.json ? JSON.stringify(json) : formatPreflight(preflight)}\n`);
    if (!(preflight.dns.ok && preflight.smtp.ok))
      throw new CliError(
        preflight.dns.ok
          ? 'SMTP checks cannot run here (see above).'
          : 'online checks cannot run here (see above).',
      );
  } finally {
    await verifier.close();
  }
}
