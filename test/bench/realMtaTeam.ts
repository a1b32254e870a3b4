// `npm run bench -- real-mta-team`: a list of one domain (3,000 addresses, 60% real mailboxes) through a team
// server — PostgreSQL, an API node and 1, then 3 verifier nodes on 127.0.0.3/.4/.5, default options — against
// Debian's Postfix that allows each client 2 connections at once (smtpd_client_connection_count_limit = 2,
// BENCH_COUNT_LIMIT to change it). Each round has a fresh database and a fresh Postfix; its time is from
// submission to Results, every row's code checked. Target (issue 26): 3 nodes ≥ 2.5 × as fast as 1, measured in
// the same run. From Postfix's log: the conversations each node opened and its refusals for connections.
import { listResourceSchema } from '../../shared/api/list.js';
import { startPostfix } from '../helpers/postfix.js';
import { startTeam } from '../helpers/team.js';
import { fmt } from './util.js';

const DOMAIN = 'heavymail.net';

export async function benchRealMtaTeam(options: {
  readonly rows: number;
  readonly nodes: readonly number[];
  readonly countLimit: number;
}): Promise<Record<string, number>> {
  const users = Array.from({ length: options.rows }, (_, i) => `user${i}`);
  const isReal = (i: number) => i % 5 < 3;
  const body = ['email', ...users.map((user) => `${user}@${DOMAIN}`)].join('\n') + '\n';
  console.log(
    `\nTeam server against Postfix (${fmt(options.rows)} addresses at one domain, ` +
      `${options.countLimit} connections at once per client), default options`,
  );
  const out: Record<string, number> = {};
  for (const nodes of options.nodes) {
    const world = await startPostfix({
      domains: [{ name: DOMAIN, users: users.filter((_, i) => isReal(i)) }],
      connectionCountLimit: options.countLimit,
      zones: {
        'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
        'mx.mailsieve.test': { a: ['127.0.0.9'] },
      },
    });
    const team = await startTeam();
    try {
      const api = await team.api();
      const sources = Array.from({ length: nodes }, (_, i) => `127.0.0.${3 + i}`);
      await Promise.all(
        sources.map((ip, i) =>
          team.worker(ip, [
            '--helo-name',
            `verifier${i + 1}.mailsieve.test`,
            '--mail-from',
            'check@mailsieve.test',
            ...world.network,
            '--allow-private-mx',
          ]),
        ),
      );
      const key = await team.key(['--checks', 'smtp']);
      const started = performance.now();
      const sent = await fetch(`${api.url}/v5/list?header=true&name=heavy.csv`, {
        method: 'POST',
        headers: { api_key: key, 'content-type': 'text/csv' },
        body,
      });
      if (sent.status !== 202) throw new Error(`E7 answered ${sent.status}: ${await sent.text()}`);
      const id = ((await sent.json()) as { list_id: number }).list_id;
      for (;;) {
        const answer = await fetch(`${api.url}/v5/list/${id}`, { headers: { api_key: key } });
        const status = listResourceSchema.parse(await answer.json());
        if (status.status === 'Results') break;
        if (status.status !== 'Pending' && status.status !== 'Processing')
          throw new Error(`the list ended ${status.status}: ${status.reason ?? ''}`);
        if (process.env.BENCH_VERBOSE)
          console.log(
            `    ${fmt((performance.now() - started) / 1000, 1)} s: ${fmt(status.online?.rows_checked ?? 0)} checked`,
          );
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const seconds = (performance.now() - started) / 1000;
      const results = await (
        await fetch(`${api.url}/v5/list/${id}/results`, { headers: { api_key: key } })
      ).text();
      const [header, ...rows] = results.trim().split('\n');
      const codeAt = header.split(',').indexOf('Validation Code');
      let wrong = 0;
      rows.forEach((row, i) => {
        if (row.split(',')[codeAt] !== (isReal(i) ? '50' : '400')) wrong++;
      });
      const log = world.log();
      const sessions = sources.map((ip) => log.split(`]: connect from unknown[${ip}]`).length - 1);
      const refused = (log.match(/Connection concurrency limit exceeded/g) ?? []).length;
      out[`seconds_${nodes}`] = seconds;
      out[`rowsPerS_${nodes}`] = options.rows / seconds;
      out[`wrong_${nodes}`] = wrong;
      out[`refused_${nodes}`] = refused;
      console.log(
        `  ${nodes} node${nodes > 1 ? 's' : ' '}   ${fmt(seconds, 1).padStart(7)} s   ${fmt(options.rows / seconds, 1).padStart(6)} rows/s   ` +
          `conversations by node ${sessions.join(' / ')}, refused for connections ${refused}, wrong codes ${wrong}`,
      );
    } finally {
      await team.close();
      await world.close();
    }
  }
  const one = out.rowsPerS_1;
  for (const nodes of options.nodes) {
    if (nodes === 1 || one === undefined) continue;
    const ratio = out[`rowsPerS_${nodes}`] / one;
    out[`speedup_${nodes}`] = ratio;
    const target = nodes === 3 ? 2.5 : undefined;
    console.log(
      `  ${nodes} nodes / 1 node    ${fmt(ratio, 2)}${target ? `   (target ≥ ${target})  ${ratio >= target ? 'MET' : 'MISSED'}` : ''}`,
    );
  }
  return out;
}
