// `npm run bench -- cluster`: an online list (SMTP level) of 100,000 rows over 10,000 domains through a team
// server — PostgreSQL, an API node and 1, 2, then 3 verifier nodes on distinct loopback source addresses —
// against a mail world that limits each source address as real servers do (clusterWorld.ts: at most 2
// connections at once per source address and host, a 100 ms greeting, Postfix's error tarpit). Each round
// runs on a fresh database (nothing learnt in a round serves the next) with the world's counts reset; its
// rows per second are from submission to Results. Targets (issue 21): 2 nodes ≥ 1.8 × and 3 nodes ≥ 2.5 × the
// 1-node rate, measured in the same run; MX questions and catch-all probes per domain ≤ 1.0 across the cluster.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTeam } from '../helpers/team.js';
import { listResourceSchema } from '../../shared/api/list.js';
import { startClusterWorld, clusterWorldConfig, type ClusterWorldSummary } from './clusterWorld.js';
import { writeClusterList } from './clusterData.js';
import { fmt } from './util.js';

interface Round {
  readonly nodes: number;
  readonly seconds: number;
  readonly rowsPerS: number;
  readonly wrong: number;
  readonly summary: ClusterWorldSummary;
}

export async function benchCluster(options: {
  readonly rows: number;
  readonly domains: number;
  readonly hosts: number;
  readonly nodes: readonly number[];
  readonly partRows: number;
}): Promise<Record<string, number>> {
  const config = clusterWorldConfig({ rows: options.rows, domains: options.domains, hosts: options.hosts });
  const scratch = mkdtempSync(join(tmpdir(), 'mailsieve-bench-cluster-'));
  const world = await startClusterWorld(config);
  console.log(
    `\nTeam server: ${fmt(options.rows)} rows over ${fmt(options.domains)} domains on ${options.hosts} mail hosts ` +
      `(world up in ${fmt(world.startMs)} ms), parts of ${fmt(options.partRows)} rows`,
  );
  const rounds: Round[] = [];
  try {
    const list = await writeClusterList(join(scratch, 'cluster.csv'), config);
    const { readFileSync } = await import('node:fs');
    const body = readFileSync(list.path);
    for (const nodes of options.nodes) {
      await world.reset();
      const team = await startTeam();
      try {
        const api = await team.api();
        const online = [
          // The mail world is on loopback: a team worker refuses private MX addresses unless allowed.
          '--allow-private-mx',
          '--dns-servers',
          world.dns,
          '--smtp-port',
          String(world.smtpPort),
          '--mail-from',
          'probe@mailsieve.test',
          '--part-rows',
          String(options.partRows),
          '--parts',
          '4',
        ];
        await Promise.all(
          Array.from({ length: nodes }, (_, i) =>
            team.worker(`127.0.0.${2 + i}`, ['--helo-name', `verifier${i + 1}.mailsieve.test`, ...online]),
          ),
        );
        const key = await team.key(['--checks', 'smtp']);
        const started = performance.now();
        const sent = await fetch(`${api.url}/v5/list?header=true&name=cluster.csv`, {
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
              `    ${fmt((performance.now() - started) / 1000, 1)} s: ${fmt(status.online?.rows_checked ?? 0)} of ${fmt(status.online?.rows_to_check ?? 0)} checked, ${fmt(status.online?.retry_rows ?? 0)} waiting`,
            );
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        const seconds = (performance.now() - started) / 1000;
        // Every row's code against the world's own answer for it.
        const results = await (
          await fetch(`${api.url}/v5/list/${id}/results`, { headers: { api_key: key } })
        ).text();
        const lines = results.split('\n').filter((line) => line !== '');
        const header = lines[0].split(',');
        const codeAt = header.indexOf('Validation Code');
        let wrong = 0;
        for (let r = 1; r < lines.length; r++)
          if (Number(lines[r].split(',')[codeAt]) !== list.expected[r - 1]) wrong++;
        const summary = await world.summary();
        rounds.push({ nodes, seconds, rowsPerS: options.rows / seconds, wrong, summary });
        const refused = Object.values(summary.sources).reduce((sum, source) => sum + source.refused, 0);
        console.log(
          `  ${nodes} node${nodes > 1 ? 's' : ' '}   ${fmt(seconds, 1).padStart(7)} s   ${fmt(options.rows / seconds, 1).padStart(7)} rows/s   ` +
            `MX per domain ≤ ${summary.dns.maxMxPerDomain}, probes per domain ≤ ${summary.smtp.maxProbesPerDomain} ` +
            `(${fmt(summary.smtp.probes)} in all), tarpitted ${fmt(summary.smtp.tarpitted)}, refused ${fmt(refused)}, ` +
            `wrong codes ${fmt(wrong)}, world busy ${fmt(summary.busy * 100, 0)}%`,
        );
      } finally {
        await team.close();
      }
    }
  } finally {
    await world.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  const one = rounds.find((round) => round.nodes === 1);
  const out: Record<string, number> = {};
  for (const round of rounds) {
    out[`rowsPerS_${round.nodes}`] = round.rowsPerS;
    out[`maxMxPerDomain_${round.nodes}`] = round.summary.dns.maxMxPerDomain;
    out[`maxProbesPerDomain_${round.nodes}`] = round.summary.smtp.maxProbesPerDomain;
    out[`wrong_${round.nodes}`] = round.wrong;
    if (one && round.nodes > 1) {
      const ratio = round.rowsPerS / one.rowsPerS;
      const target = round.nodes === 2 ? 1.8 : round.nodes === 3 ? 2.5 : undefined;
      out[`speedup_${round.nodes}`] = ratio;
      console.log(
        `  ${round.nodes} nodes / 1 node    ${fmt(ratio, 2)}${target ? `   (target ≥ ${target})  ${ratio >= target ? 'MET' : 'MISSED'}` : ''}`,
      );
    }
  }
  const perDomain = Math.max(
    ...rounds.map((r) => Math.max(r.summary.dns.maxMxPerDomain, r.summary.smtp.maxProbesPerDomain)),
  );
  console.log(
    `  MX questions and catch-all probes per domain, most in any round: ${perDomain}   (target ≤ 1.0)  ${perDomain <= 1 ? 'MET' : 'MISSED'}`,
  );
  return out;
}
