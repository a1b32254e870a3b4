// Lists with online checks: E7 → E8 → E10 on a real service whose online checks point at a loopback DNS
// server and loopback mail servers (the E1 fixture). Rows undecided offline (code 10) get their final codes
// online, at the key's checks level within the service's ceiling, as E1 does; each code is asserted in the
// results file and in reporting.status_codes, and the servers count one DNS lookup and at most one catch-all
// probe per domain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../engine/online/fixture.js';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { getStatus, lines, runList, submit, waitForList } from './helpers.js';

let world: World;

beforeAll(async () => {
  world = await startWorld({}, 6);
});
afterAll(() => world.close());

/** The list's rows: address → the code expected with an smtp key. */
const SMTP_CODES: Record<string, number> = {
  'alice@users.example.net': 50,
  'bob@users.example.net': 50,
  'nobody@users.example.net': 400,
  'carol@users.example.net': 410,
  'someone@other.example.net': 420,
  'ann@catchall.example.net': 45,
  'ben@catchall.example.net': 45,
  'cat@catchall.example.net': 45,
  'someone@missing.example.net': 310,
  'someone@nullmx.example.net': 325,
  'someone@nomail.example.net': 325,
  'someone@bigmail.example.net': 5,
  'abuse@users.example.net': 500, // decided offline: never goes online
  'not-an-address': 150,
};

/** Codes per address from a results file (header `email`, then the appended columns). */
function codesOf(text: string): Map<string, string[]> {
  const [header, ...rows] = lines(text);
  const columns = header.split(',');
  const code = columns.indexOf('Validation Code');
  const byAddress = new Map<string, string[]>();
  for (const row of rows) {
    const fields = row.split(',');
    const list = byAddress.get(fields[0]) ?? [];
    list.push(fields[code]);
    byAddress.set(fields[0], list);
  }
  return byAddress;
}

function listBody(): string {
  const addresses = Object.keys(SMTP_CODES);
  // bob twice (a duplicate), the rest once.
  return ['email', ...addresses, 'bob@users.example.net'].join('\n') + '\n';
}

describe('lists with online checks', () => {
  it('gives each row its online code with an smtp key: results file and reporting', async () => {
    const key = world.key({ checks: 'smtp' });
    const catchallBefore = world.farm.log('catchall').rcpts.length;
    const { list, results } = await runList(world.service.url, key, listBody(), {
      query: { header: 'true' },
    });
    expect(list.status).toBe('Results');
    expect(results?.status).toBe(200);
    const codes = codesOf(results!.text);
    for (const [address, code] of Object.entries(SMTP_CODES))
      expect({ address, codes: codes.get(address) }).toEqual({
        address,
        codes: address === 'bob@users.example.net' ? [String(code), String(code)] : [String(code)],
      });
    const expected: Record<string, number> = {};
    for (const code of [...Object.values(SMTP_CODES), 50])
      expected[String(code)] = (expected[String(code)] ?? 0) + 1;
    expect(list.records).toBe(Object.keys(SMTP_CODES).length + 1);
    expect(list.services.email_validation?.reporting?.status_codes).toEqual(expected);
    expect(list.services.email_validation?.completed_count).toBe(list.records);

    // One DNS lookup per domain, however many rows it has (users.example.net has six): each record type is
    // asked once at most (a domain without MX is asked MX, then A and AAAA, RFC 5321 §5.1).
    const domains = new Set(
      Object.keys(SMTP_CODES)
        .filter((a) => a.includes('@') && SMTP_CODES[a] !== 500)
        .map((a) => a.slice(a.indexOf('@') + 1)),
    );
    for (const domain of domains) {
      expect({ domain, mx: world.dns.count(domain, 'MX') }).toEqual({ domain, mx: 1 });
      for (const type of ['A', 'AAAA'])
        expect(world.dns.count(domain, type), `${domain} ${type}`).toBeLessThanOrEqual(1);
    }
    // One catch-all probe for catchall.example.net: the three list addresses and one random address.
    const catchallRcpts = world.farm
      .log('catchall')
      .rcpts.slice(catchallBefore)
      .filter((r) => r.address.endsWith('@catchall.example.net'));
    const probes = catchallRcpts.filter((r) => !(r.address in SMTP_CODES));
    expect(probes.length).toBe(1);
    expect(catchallRcpts.length).toBe(4);
    // users.example.net accepted alice and bob: one probe there too, at most.
    const usersProbes = world.farm
      .log('mailbox')
      .rcpts.filter((r) => r.address.endsWith('@users.example.net') && !(r.address in SMTP_CODES));
    expect(usersProbes.length).toBeLessThanOrEqual(1);
  }, 60_000);

  it('gives 20 with a dns key, and keeps the offline verdicts (10) with an offline key', async () => {
    const dnsKey = world.key({ checks: 'dns' });
    const body = 'email\nalice@users.example.net\nsomeone@missing.example.net\nnot-an-address\n';
    const dns = await runList(world.service.url, dnsKey, body, { query: { header: 'true' } });
    expect(dns.list.status).toBe('Results');
    const dnsCodes = codesOf(dns.results!.text);
    expect(dnsCodes.get('alice@users.example.net')).toEqual(['20']);
    expect(dnsCodes.get('someone@missing.example.net')).toEqual(['310']);
    expect(dnsCodes.get('not-an-address')).toEqual(['150']);
    expect(dns.list.services.email_validation?.reporting?.status_codes).toEqual({
      '20': 1,
      '310': 1,
      '150': 1,
    });

    const offlineKey = world.key({ checks: 'offline' });
    const connections = world.farm.log('mailbox').connections;
    const dnsQueries = world.dns.queries.length;
    const offline = await runList(world.service.url, offlineKey, body, { query: { header: 'true' } });
    const offlineCodes = codesOf(offline.results!.text);
    expect(offlineCodes.get('alice@users.example.net')).toEqual(['10']);
    expect(offlineCodes.get('someone@missing.example.net')).toEqual(['10']);
    expect(offline.list.services.email_validation?.reporting?.status_codes).toEqual({ '10': 2, '150': 1 });
    expect(world.farm.log('mailbox').connections).toBe(connections);
    expect(world.dns.queries.length).toBe(dnsQueries);
  }, 60_000);

  it('moves completed_count while the online checks run; a timed-out row waits for a retry until Finish now', async () => {
    const key = world.key({ checks: 'smtp' });
    // Three rows decided offline, one answered at once online, one whose mail server never greets (its
    // check ends with its budget, 10 s, as unknown, and waits for a retry: 5 minutes by default).
    const body =
      'email\nnot-an-address\nabuse@users.example.net\nx@mailinator.com\nbob@users.example.net\nsomeone@stall.example.net\n';
    const submitted = await submit(world.service.url, key, body, { query: { header: 'true' } });
    expect(submitted.status).toBe(202);
    const id = submitted.json<{ list_id: number }>().list_id;
    const seen = new Set<number>();
    let waiting: ListResource | undefined;
    for (;;) {
      const list = listResourceSchema.parse((await getStatus(world.service.url, key, id)).json());
      expect(list.status).not.toBe('Results');
      const completed = list.services.email_validation?.completed_count;
      if (completed !== undefined) seen.add(completed);
      if (list.online && list.online.retry_rows > 0) {
        waiting = list;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Offline verdicts first (3), then bob's online verdict (4) while the stalled check still runs.
    expect(seen.has(4)).toBe(true);
    // One row waits for a retry, about 5 minutes on: fields, not prose.
    expect(waiting.checks).toBe('smtp');
    expect(waiting.online).toMatchObject({
      rows_to_check: 2,
      rows_checked: 1,
      domains_total: 2,
      domains_done: 2,
      retry_rows: 1,
      retry_attempt: 0,
    });
    const retryIn = Date.parse(waiting.online!.retry_at!) - Date.now();
    expect(retryIn).toBeGreaterThan(4 * 60_000);
    expect(retryIn).toBeLessThanOrEqual(5 * 60_000);
    expect(waiting.services.email_validation?.completed_count).toBe(4);
    // Finish now: the row stays unknown and the list completes.
    const finished = await fetch(`${world.service.url}/v5/list/${id}/finish`, {
      method: 'POST',
      headers: { api_key: key },
    });
    expect(finished.status).toBe(200);
    expect(listResourceSchema.parse(await finished.json()).online?.finished_early).toBe(true);
    const list = await waitForList(world.service.url, key, id);
    expect(list.online).toMatchObject({
      retry_rows: 0,
      retry_at: null,
      rows_checked: 2,
      finished_early: true,
    });
    const explain = await fetch(`${world.service.url}/v5/list/${id}/explain`, { headers: { api_key: key } });
    expect(explain.status).toBe(200);
    expect(await explain.text()).toMatch(
      /^5,someone@stall\.example\.net,5,smtp,.*not asked again: the wait was ended \(Finish now\),smtp,mx\.stall\.example\.net,,default route,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m,
    );
    expect(list.services.email_validation?.completed_count).toBe(5);
    expect(list.services.email_validation?.reporting?.status_codes).toEqual({
      '150': 1,
      '500': 1,
      '525': 1,
      '50': 1,
      '5': 1,
    });
  }, 60_000);
});
