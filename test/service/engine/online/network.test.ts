// With no network: the resolver cannot be reached, never answers, or answers without seeing the internet
// (this workplace's own resolver says NXDOMAIN for everything). DNS and SMTP checks end as unknown (5)
// within E1's timeout, say why, and nothing hangs. GET /v5/status says the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedUdpPort, startDnsServer, startSilentDnsServer } from '../../../helpers/dnsServer.js';
import { get, tempDir } from '../../../helpers/service.js';
import { startService, type RunningService } from '../../../../service/server.js';
import { openServiceDb, type ServiceDb } from '../../../../service/store/db.js';
import { createKey } from '../../../../service/store/keys.js';
import { parseDnsServers } from '../../../../service/engine/online/index.js';

interface Offline {
  service: RunningService;
  db: ServiceDb;
  key: string;
  close(): Promise<void>;
}

async function serviceWith(dnsServers: string): Promise<Offline> {
  const dir = tempDir();
  const db = openServiceDb(dir.path);
  const parsed = parseDnsServers(dnsServers);
  if (!parsed.ok) throw new Error('bad servers');
  const service = await startService({
    dataDir: dir.path,
    db,
    port: 0,
    online: { dnsServers: parsed.servers },
  });
  const { key } = createKey(db, { mode: 'safe_to_send', services: ['validation'], checks: 'smtp' });
  return {
    service,
    db,
    key,
    async close() {
      await service.close();
      db.close();
      dir.remove();
    },
  };
}

async function ev(world: Offline, email: string, timeout: string) {
  const started = Date.now();
  const params = new URLSearchParams({ email, timeout, explain: '1', api_key: world.key });
  const response = await get(`${world.service.url}/v5/ev?${params.toString()}`);
  const body = JSON.parse(response.text) as { safe_to_send: Record<string, unknown>; explain: string[] };
  return {
    status: response.status,
    result: body.safe_to_send,
    explain: body.explain.join('\n'),
    ms: Date.now() - started,
  };
}

describe('no network', () => {
  const worlds: Offline[] = [];
  const stops: (() => Promise<void>)[] = [];
  let refused: Offline;
  let silent: Offline;
  let isolated: Offline;

  beforeAll(async () => {
    const quiet = await startSilentDnsServer();
    const lonely = await startDnsServer({}, { mode: 'isolated' });
    stops.push(
      () => quiet.close(),
      () => lonely.close(),
    );
    refused = await serviceWith(await closedUdpPort());
    silent = await serviceWith(quiet.address);
    isolated = await serviceWith(lonely.address);
    worlds.push(refused, silent, isolated);
  });
  afterAll(async () => {
    for (const world of worlds) await world.close();
    for (const stop of stops) await stop();
  });

  it('ends as unknown (5) at once when the resolver cannot be reached, and says so', async () => {
    const { status, result, explain, ms } = await ev(refused, 'jane.doe@example.com', '5');
    expect(status).toBe(200);
    expect(result).toEqual({ address: 'jane.doe@example.com', status: 'unknown', status_code: 5 });
    expect(explain).toMatch(/refused the query \(nothing listens there\)/);
    expect(ms).toBeLessThan(1000);
  });

  it('ends as unknown (5) within the timeout when the resolver never answers', async () => {
    const { result, explain, ms } = await ev(silent, 'jane.doe@example.com', '0.5');
    expect(result).toMatchObject({ status_code: 5 });
    expect(explain).toMatch(/no answer/i);
    expect(ms).toBeGreaterThanOrEqual(400);
    expect(ms).toBeLessThan(1000);
  });

  it('does not call domains nonexistent on the word of a resolver that cannot see the internet', async () => {
    const { result, explain } = await ev(isolated, 'jane.doe@example.com', '5');
    expect(result).toMatchObject({ status_code: 5 });
    expect(explain).toMatch(/cannot see the internet/);
  });

  it('keeps offline answers: syntax errors and disposable domains need no network', async () => {
    expect((await ev(refused, 'jane.doe@@example.com', '1')).result).toMatchObject({ status_code: 155 });
    expect((await ev(silent, 'x@mailinator.com', '1')).result).toMatchObject({ status_code: 525 });
  });

  it('reports the same in GET /v5/status, quickly', async () => {
    for (const [world, pattern] of [
      [refused, /refused the query/],
      [isolated, /cannot see the internet/],
    ] as const) {
      const started = Date.now();
      const response = await get(`${world.service.url}/v5/status?api_key=${world.key}`);
      expect(response.status).toBe(200);
      const body = JSON.parse(response.text) as {
        checks: string;
        dns: { ok: boolean; detail: string };
        smtp: { ok: boolean; detail: string };
      };
      expect(body.checks).toBe('smtp');
      expect(body.dns.ok).toBe(false);
      expect(body.dns.detail).toMatch(pattern);
      expect(body.smtp).toMatchObject({ ok: false, detail: expect.stringMatching(/^Not tried/) as unknown });
      expect(Date.now() - started).toBeLessThan(1500);
    }
  });
});
