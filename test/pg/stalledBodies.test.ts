// A team server's API node reads a body only after its key (issue 36, point 2), as the single node does
// (test/service/http/stalledBodies.test.ts), on the team's own path: a key is looked up in PostgreSQL, and an
// address that fails too often is refused (429) before any lookup. 300 clients with no key or a wrong one, each
// sending half of a large body and then nothing, are answered at once (401, 429, 404) and closed, and the node's
// memory grows by under 50 MB while a good key's E1 keeps answering; a good key's body that stops is answered
// 408 after the request timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import {
  holdKeylessBodies,
  percentile,
  probeE1,
  requestHead,
  stalledClient,
} from '../helpers/stalledClients.js';

const REQUEST_TIMEOUT_S = 5;
const MB = 1024 * 1024;

let team: TeamCluster;
let api: TeamProcess;
let key: string;

beforeAll(async () => {
  team = await startTeam();
  api = await team.api(['--checks', 'offline', '--request-timeout', String(REQUEST_TIMEOUT_S)]);
  key = await team.key(['--checks', 'offline']);
}, 60_000);

afterAll(async () => {
  await team?.close();
});

const port = () => Number(new URL(api.url).port);

describe('a team API node reads a body only after its key', () => {
  it('closes 300 keyless clients holding half-sent bodies at once, holding under 50 MB, while E1 answers', async () => {
    const e1 = `${api.url}/v5/ev?email=jane%40example.com&api_key=${key}`;
    for (let i = 0; i < 20; i++) expect((await fetch(e1)).status, api.output()).toBe(200);
    const probe = probeE1(e1);
    const held = await holdKeylessBodies(port(), api.child.pid!, { count: 300, waitMs: 20_000 });
    const { latencies, statuses } = await probe.stop();

    const grew = held.rssPeak - held.rssBefore;
    const open = held.clients.filter((client) => client.closedAt() === undefined).length;
    const slowest = Math.max(
      ...held.clients.map((client) => (client.closedAt() ?? Infinity) - client.startedAt),
    );
    const answers = new Map<number | undefined, number>();
    for (const client of held.clients) answers.set(client.status(), (answers.get(client.status()) ?? 0) + 1);
    console.log(
      `300 keyless clients on a team API node: RSS ${Math.round(held.rssBefore / MB)} MB before, peak +${(grew / MB).toFixed(1)} MB; ` +
        `${open} left open, the last closed after ${slowest} ms; answers ${JSON.stringify(Object.fromEntries(answers))}; ` +
        `E1 meanwhile: ${latencies.length} answers, p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );
    expect(grew).toBeLessThan(50 * MB);
    expect(open).toBe(0);
    expect(slowest).toBeLessThan(REQUEST_TIMEOUT_S * 1000);
    // Refused before the body: the invalid key (401), or past the address's failed authentications (429), or
    // no such path (404); every answer closed its connection.
    for (const client of held.clients) {
      expect([401, 404, 429]).toContain(client.status());
      expect(client.text()).toMatch(/\r\nconnection: close\r\n/i);
    }
    expect(statuses.length).toBeGreaterThanOrEqual(5);
    expect(statuses.every((status) => status === 200)).toBe(true);
  }, 90_000);

  it('answers a good key’s body that stops 408, after the request timeout', async () => {
    const client = stalledClient(
      port(),
      requestHead('POST', `/v5/ei/bulk?api_key=${key}`, 16e6, { 'Content-Type': 'application/json' }),
      MB,
    );
    await Promise.race([client.closed, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    client.socket.destroy();
    expect(client.status(), client.text()).toBe(408);
    const after = client.closedAt()! - client.startedAt;
    expect(after).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_S * 1000 - 100);
    expect(after).toBeLessThan(REQUEST_TIMEOUT_S * 1000 + 3000);
  }, 30_000);
});
