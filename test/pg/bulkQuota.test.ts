// What E2–E6 charge on a team server (the PostgreSQL adapter of the usage port, service/pg/usage.ts; the single
// node's: test/service/identity/quotaCharges.test.ts), across two API nodes. E2, E3 and E4 count per record
// answered from the data, as E5 and E6 do; E6 reserves its records in PostgreSQL before any work and gives back
// those not answered (per-record errors) in the period charged; an exhausted trial key's 5,000-record E6 is
// refused 403 before the node works on it (the node's CPU for ten such requests, against ten answered ones).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyInfoSchema } from '../../shared/api/listServices.js';
import { openServiceDb } from '../../service/store/db.js';
import { tempDir } from '../helpers/service.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { importFixture } from '../service/identity/fixture.js';

let team: TeamCluster;
let apis: TeamProcess[];
const dirs: { path: string; remove(): void }[] = [];

/** A node's data folder holding the identity tests' reference data (each node answers E2–E6 from its own). */
async function dataDirWithFixture(): Promise<string> {
  const dir = tempDir('mailsieve-team-');
  dirs.push(dir);
  const db = openServiceDb(dir.path);
  await importFixture(db, dir.path);
  db.close();
  return dir.path;
}

beforeAll(async () => {
  team = await startTeam();
  const folders = [await dataDirWithFixture(), await dataDirWithFixture()];
  apis = await Promise.all(folders.map((folder) => team.api(['--data-dir', folder])));
}, 60_000);

afterAll(async () => {
  await team?.close();
  for (const dir of dirs) dir.remove();
});

const get = async (base: string, path: string, params: Record<string, string>) => {
  const response = await fetch(`${base}${path}?${new URLSearchParams(params).toString()}`);
  return { status: response.status, body: await response.json() };
};
const post = async (base: string, path: string, key: string, records: unknown[]) => {
  const response = await fetch(`${base}${path}?${new URLSearchParams({ api_key: key }).toString()}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(records),
  });
  return { status: response.status, body: await response.json() };
};

/** The key's use of its quota, as `GET /v5/key` tells it (not billable), asked of `api`. */
async function used(api: TeamProcess, key: string): Promise<number> {
  const response = await fetch(`${api.url}/v5/key`, { headers: { api_key: key } });
  expect(response.status).toBe(200);
  return keyInfoSchema.parse(await response.json()).quota!.used;
}

/** CPU time a node's process has used, in ms (Linux: user and system clock ticks of /proc/<pid>/stat). */
function cpuMs(api: TeamProcess): number {
  const fields = readFileSync(`/proc/${api.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const people = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ email: `person${from + i}@example.com` }));

describe('E2–E6 against a team server’s quotas', () => {
  it('charges E2, E3 and E4 per record answered on either node, not their per-record errors', async () => {
    const key = await team.key(['--services', 'alternate_email,email_append,postal_append', '--quota', '20']);
    const [one, two] = apis;
    expect(await get(one.url, '/ae', { email: 'jane.doe@example.com', api_key: key })).toEqual({
      status: 200,
      body: { alternate_email: [{ email: 'jd@example.org', email_match_type: 'Individual' }] },
    });
    expect((await get(two.url, '/ae', { email: 'not an address', api_key: key })).status).toBe(400);
    expect((await get(two.url, '/v5/eppend', { email: 'jane.doe@example.com', api_key: key })).status).toBe(
      200,
    );
    const append = { first: 'Jane', last: 'Doe', street: '12 Main Street', zip: '62704', api_key: key };
    expect((await get(one.url, '/v5/eppend', append)).status).toBe(200);
    expect(await used(two, key)).toBe(3);
    const bulk = await post(two.url, '/v5/eppend/bulk', key, [
      ...people(5),
      { email: 'bad' },
      { city: 'Salem' },
    ]);
    expect(bulk.status).toBe(200);
    expect(await used(one, key)).toBe(8);
  });

  it('reserves E6 records in PostgreSQL before the work and gives back those not answered, in the period charged', async () => {
    const key = await team.key(['--services', 'intelligence', '--quota', '100', '--quota-period', 'month']);
    const records = [...people(50), ...Array.from({ length: 10 }, () => ({ email: 'not an address' }))];
    const answer = await post(apis[0].url, '/v5/ei/bulk', key, records);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveLength(60);
    expect(await used(apis[1], key)).toBe(50);
    // Four requests of 30 at once over both nodes: 50 are left, so one fits and three are refused whole.
    const four = await Promise.all(
      [0, 1, 2, 3].map((i) => post(apis[i % 2].url, '/v5/ei/bulk', key, people(30, 100 + 30 * i))),
    );
    expect(four.map((a) => a.status).sort()).toEqual([200, 403, 403, 403]);
    expect(await used(apis[0], key)).toBe(80);
  });

  it('refuses an exhausted trial key’s 5,000-record E6 with 403 before the node works on it', async () => {
    const trial = await team.key(['--services', 'intelligence', '--trial']);
    const free = await team.key(['--services', 'intelligence']);
    const api = apis[0];
    expect((await post(api.url, '/v5/ei/bulk', trial, people(100))).status).toBe(200);
    expect(await used(api, trial)).toBe(100);
    const records = people(5_000);
    // Warm the node's bulk workers with a request answered.
    expect((await post(api.url, '/v5/ei/bulk', free, records)).status).toBe(200);

    let before = cpuMs(api);
    for (let i = 0; i < 10; i++) expect((await post(api.url, '/v5/ei/bulk', free, records)).status).toBe(200);
    const answered = cpuMs(api) - before;

    before = cpuMs(api);
    for (let i = 0; i < 10; i++)
      expect(await post(api.url, '/v5/ei/bulk', trial, records)).toEqual({
        status: 403,
        body: {
          error_code: 403,
          error_msg: "Query limit exceeded: this trial key's 100 queries are used up.",
        },
      });
    const refused = cpuMs(api) - before;
    expect(refused).toBeLessThan(answered / 3);
    expect(await used(apis[1], trial)).toBe(100);
  }, 120_000);
});
