// Readiness (`GET /readyz`): the checks other code registers, and a team node's own — PostgreSQL answers, its
// schema is this version's, the queue is started — against a real PostgreSQL stopped and started again
// under a running API node. Anyone may ask: what it says names no address, user or database (issue 36,
// point 10); the node's log is told.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicReport, Readiness } from '../../service/ops/readiness.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';

describe('Readiness', () => {
  it('is ready when every registered check passes, and says which one fails and why', async () => {
    const readiness = new Readiness();
    expect(await readiness.run()).toEqual({ ready: true, checks: [] });
    let isListed = false;
    const remove = readiness.register('source-address', () =>
      isListed ? '203.0.113.10 is listed on zen.spamhaus.org' : undefined,
    );
    readiness.register('store', () => Promise.resolve(undefined));
    expect((await readiness.run()).ready).toBe(true);
    isListed = true;
    expect(await readiness.run()).toEqual({
      ready: false,
      checks: [
        { name: 'source-address', ok: false, detail: '203.0.113.10 is listed on zen.spamhaus.org' },
        { name: 'store', ok: true },
      ],
    });
    remove();
    expect(readiness.names).toEqual(['store']);
    expect((await readiness.run()).ready).toBe(true);
  });

  it('fails a check that throws or does not answer in time; an error’s own message is for the log only', async () => {
    const readiness = new Readiness();
    readiness.register('throws', () => {
      throw new Error('connect ECONNREFUSED 10.0.0.5:5432');
    });
    readiness.register('hangs', () => new Promise<undefined>(() => undefined));
    readiness.register('knows more', () => ({ detail: 'in words', logged: 'at 10.0.0.5' }));
    const report = await readiness.run(50);
    expect(report.ready).toBe(false);
    expect(report.checks).toEqual([
      {
        name: 'throws',
        ok: false,
        detail: "the check failed (the node's log says why)",
        logged: 'connect ECONNREFUSED 10.0.0.5:5432',
      },
      { name: 'hangs', ok: false, detail: 'no answer within 50 ms' },
      { name: 'knows more', ok: false, detail: 'in words', logged: 'at 10.0.0.5' },
    ]);
    expect(publicReport(report)).not.toContain('10.0.0.5');
  });
});

describe('a team API node’s /readyz', () => {
  let team: TeamCluster;
  let api: TeamProcess;
  beforeAll(async () => {
    team = await startTeam();
    api = await team.api();
  }, 60_000);
  afterAll(() => team?.close());

  it('answers 503 with what is wrong while PostgreSQL is down, and 200 again once it is back', async () => {
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: { name: string; ok: boolean }[] }).checks).toEqual([
      { name: 'store', ok: true },
      { name: 'postgres', ok: true },
      { name: 'schema', ok: true },
      { name: 'queue', ok: true },
    ]);
    await team.pg.stop();
    const down = await fetch(`${api.url}/readyz`);
    expect(down.status).toBe(503);
    const text = await down.text();
    const report = JSON.parse(text) as {
      ready: boolean;
      checks: { name: string; ok: boolean; detail?: string }[];
    };
    expect(report.ready).toBe(false);
    expect(report.checks.find((check) => check.name === 'postgres')).toEqual({
      name: 'postgres',
      ok: false,
      detail: 'Cannot connect to PostgreSQL: nothing listens there (is the server running?).',
    });
    // Neither the database's user, host, port and name, nor an error's message naming them.
    for (const secret of ['postgres://', '127.0.0.1', String(team.pg.port), '/team', 'ECONNREFUSED'])
      expect(text).not.toContain(secret);
    // The node's log has it (its writer thread writes a moment later), once however often it is asked.
    await fetch(`${api.url}/readyz`);
    const said = await logged(api, /"check":"postgres".*"not ready"/);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/team/);
    // The process still answers.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    await team.pg.start();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const again = await fetch(`${api.url}/readyz`);
      if (again.status === 200) break;
      if (Date.now() > deadline) throw new Error(`still not ready: ${await again.text()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await logged(api, /"check":"postgres".*"ready again"/)).toHaveLength(1);
  }, 90_000);
});

/** The lines of the node's log that match `pattern`, once there is one (or after 5 s). */
async function logged(node: TeamProcess, pattern: RegExp): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const lines = node
      .output()
      .split('\n')
      .filter((line) => pattern.test(line));
    if (lines.length > 0 || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
