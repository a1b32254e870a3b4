// Tenant isolation on a team server (issue 27, point 11): a list belongs to the key that submitted it, on every
// API node. Key B gets 404 for key A's list at E8, E9, E10, Finish now and the explanation, on either node,
// with the very answer a list that does not exist gets, and key A still gets its list from both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { getResults, getStatus, purchase, submit, waitForList } from '../service/lists/helpers.js';

let team: TeamCluster;
let apis: TeamProcess[];
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    'example.net': { mx: [[10, 'mx.example.net']] },
    'mx.example.net': { a: ['192.0.2.25'] },
  });
  team = await startTeam();
  apis = await Promise.all([team.api(), team.api()]);
  await team.worker('127.0.0.2', ['--dns-servers', dns.address]);
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
});

const call = async (base: string, key: string, id: number | string, what: 'finish' | 'explain') => {
  const response = await fetch(`${base}/v5/list/${id}/${what}`, {
    method: what === 'finish' ? 'POST' : 'GET',
    headers: { api_key: key },
  });
  return { status: response.status, text: await response.text() };
};

/** Every list endpoint, as `key` asks them about list `id` on `base`: each answer's status and body. */
async function everyEndpoint(base: string, key: string, id: number | string) {
  return {
    status: await getStatus(base, key, id),
    purchase: await purchase(base, key, id),
    results: await getResults(base, key, id),
    finish: await call(base, key, id, 'finish'),
    explain: await call(base, key, id, 'explain'),
  };
}

describe('a list belongs to its key on every API node', () => {
  it('answers another key 404 at E8, E9, E10, Finish now and explain, on either node', async () => {
    const keyA = await team.key(['--checks', 'dns', '--label', 'A']);
    const keyB = await team.key(['--checks', 'dns', '--label', 'B']);
    const sentAt = Date.now();
    const sent = await submit(apis[0].url, keyA, 'email\njane@example.net\nbad address\n', {
      query: { header: 'true' },
    });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    const list = await waitForList(apis[1].url, keyA, id, 60_000);
    expect(list.status).toBe('Results');

    for (const api of apis) {
      const owner = await everyEndpoint(api.url, keyA, id);
      for (const [what, answer] of Object.entries(owner)) expect(answer.status, `A ${what}`).toBe(200);
      expect(owner.results.text).toContain('jane@example.net');
      // The explain CSV, as the team server keeps it (each part's rows in PostgreSQL): every verdict with its
      // evidence, the DNS verdict from the worker's --source-address.
      const [header, ...rows] = owner.explain.text.trim().split('\n');
      expect(header).toBe('Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At');
      expect(rows.map((row) => row.slice(0, row.lastIndexOf(',')))).toEqual([
        '1,jane@example.net,20,dns,DNS: example.net MX mx.example.net; the mailbox was not asked,dns,example.net,MX mx.example.net,127.0.0.2',
        '2,bad address,150,offline,decided offline: No @ sign,syntax,,,',
      ]);
      for (const row of rows) {
        const at = row.slice(row.lastIndexOf(',') + 1);
        expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(Date.parse(at)).toBeGreaterThanOrEqual(Math.floor(sentAt / 1000) * 1000);
        expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
      }

      const other = await everyEndpoint(api.url, keyB, id);
      // The answer for a list that does not exist, with its id in the words.
      const missing = await everyEndpoint(api.url, keyB, 999_999);
      for (const what of Object.keys(other) as (keyof typeof other)[]) {
        expect(other[what].status, `B ${what} on ${api.url}`).toBe(404);
        expect(missing[what].status, `missing ${what}`).toBe(404);
        expect(other[what].text.replaceAll(String(id), 'ID'), `B ${what}`).toBe(
          missing[what].text.replaceAll('999999', 'ID'),
        );
        expect(other[what].text, `B ${what}`).not.toContain('jane');
      }
    }
    // B's calls changed nothing of A's list.
    const after = await getStatus(apis[0].url, keyA, id);
    expect(after.json<{ status: string }>().status).toBe('Results');
  });
});
