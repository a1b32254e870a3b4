// Online checks over a list-sized load (issue 5): 100,000 rows over 2,000 domains, SMTP checks against
// loopback DNS and mail servers (in a worker thread). By default (`via: 'list'`) the rows are a real list
// driven through a service (E7, E8 until Results): its online verifier checks them, grouped by domain, with
// `inFlight` checks at once. With `via: 'verifier'` they go straight through one createOnlineVerifier().
// Counted at the servers: at
// most one DNS question per domain (its MX; the MX host's address comes in the additional section) and at
// most one catch-all probe per domain. Loopback traffic only (127.0.9.0/24 and 127.0.0.1), bounded.
import { Worker } from 'node:worker_threads';
import { startService } from '../../service/server.js';
import { openServiceDb } from '../../service/store/db.js';
import { createKey } from '../../service/store/keys.js';
import { tempDir } from '../helpers/service.js';
import { createOnlineVerifier, parseDnsServers } from '../../service/engine/online/index.js';
import { NO_POLICY } from '../../service/engine/types.js';
import type { BenchCounts } from './onlineServers.js';
import { fmt } from './util.js';

export interface OnlineBenchOptions {
  readonly rows: number;
  readonly domains: number;
  /** Checks in flight at once. */
  readonly inFlight: number;
  /** Feed the rows grouped by domain (true), or in list order (the verifier path only: a list groups them). */
  readonly grouped: boolean;
  /** Through a list on a service (default), or straight through one verifier. */
  readonly via?: 'list' | 'verifier';
}

/** The rows as one list through a real service: E7, then E8 until Results. Answers the codes counted. */
async function runAsList(
  addresses: readonly string[],
  options: OnlineBenchOptions,
  dns: Parameters<typeof startService>[0]['online'],
): Promise<Map<number, number>> {
  const dir = tempDir('mailsieve-bench-online-');
  const db = openServiceDb(dir.path);
  const service = await startService({
    dataDir: dir.path,
    db,
    port: 0,
    ...(dns ? { online: dns } : {}),
    lists: { onlineConcurrency: options.inFlight, onlineBudgetMs: 30_000 },
  });
  try {
    const key = createKey(db, {
      mode: 'safe_to_send',
      services: ['validation'],
      checks: 'smtp',
      rateLimit: 0,
    }).key;
    const form = new FormData();
    form.append('file', new Blob([`email\n${addresses.join('\n')}\n`]), 'bench.csv');
    const submitted = await fetch(`${service.url}/v5/list?header=true`, {
      method: 'POST',
      headers: { api_key: key },
      body: form,
    });
    if (submitted.status !== 202)
      throw new Error(`E7 answered ${submitted.status}: ${await submitted.text()}`);
    const { list_id: id } = (await submitted.json()) as { list_id: number };
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const response = await fetch(`${service.url}/v5/list/${id}`, { headers: { api_key: key } });
      const list = (await response.json()) as {
        status: string;
        reason?: string;
        services: { email_validation?: { reporting?: { status_codes: Record<string, number> } } };
      };
      if (list.status === 'Results') {
        const codes = list.services.email_validation?.reporting?.status_codes ?? {};
        return new Map(Object.entries(codes).map(([code, n]) => [Number(code), n]));
      }
      if (list.status !== 'Pending' && list.status !== 'Processing')
        throw new Error(`list ${id} ended ${list.status}: ${list.reason ?? ''}`);
    }
  } finally {
    await service.close();
    db.close();
    dir.remove();
  }
}

function ask<T>(worker: Worker, message: string, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listen = (reply: Record<string, unknown>) => {
      if (key in reply) {
        worker.off('message', listen);
        resolve(reply[key] as T);
      }
    };
    worker.on('message', listen);
    if (message) worker.postMessage(message);
  });
}

export async function benchOnline(options: OnlineBenchOptions): Promise<Record<string, number>> {
  const perDomain = Math.ceil(options.rows / options.domains);
  const worker = new Worker(new URL('./onlineServers.js', import.meta.url), {
    workerData: { domains: options.domains, perDomain },
  });
  const ready = await ask<{ dns: string; port: number }>(worker, '', 'ready');
  const servers = parseDnsServers(ready.dns);
  if (!servers.ok) throw new Error('bad DNS address');
  // Rows: every domain's addresses, interleaved as a real list's are (a stride walk over the domains)…
  const listed: { domain: number; address: string }[] = [];
  for (let k = 0; k < options.rows; k++) {
    const domain = (k * 7919) % options.domains;
    const j = Math.floor(k / options.domains) % perDomain;
    listed.push({ domain, address: `p${j}@d${domain}.bench.example.net` });
  }
  // …and handed to the verifier grouped by domain, as a list should feed its online checks: a domain's
  // addresses then share a few conversations with its mail server instead of one connection each.
  const rows = (options.grouped ? [...listed].sort((a, b) => a.domain - b.domain) : listed).map(
    (r) => r.address,
  );
  const onlineOptions = {
    dnsServers: servers.servers,
    smtpPort: ready.port,
    heloName: 'bench.mailsieve.test',
    mailFrom: 'bench@mailsieve.test',
    smtpPacingMs: 50,
  };
  const via = options.via ?? 'list';
  const verifier = createOnlineVerifier(onlineOptions);
  let codes = new Map<number, number>();
  const started = Date.now();
  let next = 0;
  try {
    if (via === 'list')
      codes = await runAsList(
        listed.map((r) => r.address),
        options,
        onlineOptions,
      );
    else
      await Promise.all(
        Array.from({ length: options.inFlight }, async () => {
          while (next < rows.length) {
            const row = rows[next++];
            const verdict = await verifier.verify(row, NO_POLICY, { level: 'smtp', budgetMs: 30_000 });
            codes.set(verdict.code, (codes.get(verdict.code) ?? 0) + 1);
          }
        }),
      );
    const seconds = (Date.now() - started) / 1000;
    const counts = await ask<BenchCounts>(worker, 'counts', 'counts');
    const stats = verifier.stats;
    const byCode = [...codes.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([c, n]) => `${c}: ${fmt(n)}`)
      .join(', ');
    console.log(
      `\nOnline checks (smtp) — ${fmt(rows.length)} rows over ${fmt(options.domains)} domains, ${options.inFlight} in flight, ` +
        (via === 'list'
          ? 'as one list through the service (E7 to Results), '
          : `straight through the verifier, ${options.grouped ? 'grouped by domain' : 'in list order'}, `) +
        'loopback servers (100 ms greeting delay)',
    );
    console.log(`  time        ${fmt(seconds, 1)} s   ${fmt(rows.length / seconds)} rows/s`);
    console.log(`  codes       ${byCode}`);
    console.log(
      `  DNS         ${fmt(counts.dnsQueries)} questions at the server; most for one domain: ${counts.maxQueriesPerDomain} (target ≤ 1)  ${counts.maxQueriesPerDomain <= 1 ? 'MET' : 'MISSED'}`,
    );
    console.log(
      `  catch-all   ${fmt(counts.probes)} probes; most for one domain: ${counts.maxProbesPerDomain} (target ≤ 1)  ${counts.maxProbesPerDomain <= 1 ? 'MET' : 'MISSED'}`,
    );
    console.log(
      `  SMTP        ${fmt(counts.connections)} connections, ${fmt(counts.rcpts)} RCPT` +
        (via === 'verifier' ? `, at most ${stats.peakSmtpSessions} conversations open at once` : ''),
    );
    return {
      rows: rows.length,
      seconds,
      rows_per_s: rows.length / seconds,
      dns_queries: counts.dnsQueries,
      max_dns_queries_per_domain: counts.maxQueriesPerDomain,
      catch_all_probes: counts.probes,
      max_probes_per_domain: counts.maxProbesPerDomain,
      smtp_connections: counts.connections,
      rcpts: counts.rcpts,
    };
  } finally {
    await verifier.close();
    await ask(worker, 'close', 'closed');
    await worker.terminate();
  }
}
