// The self-check of a source address against a loopback DNS server of the test's own: the reverse names of IPv4
// and IPv6 addresses (RFC 1035 §3.5, RFC 3596 §2.5), a listing with its reason, a block list's refusal code, and
// what a node's readiness says of each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../helpers/dnsServer.js';
import { checkSourceAddress, reverseName } from '../../../../service/engine/online/addressCheck.js';
import { AddressSelfCheck } from '../../../../service/engine/online/selfCheck.js';
import { parseDnsServers } from '../../../../service/engine/online/index.js';

let dns: TestDnsServer;
const servers = () => {
  const parsed = parseDnsServers(dns.address);
  if (!parsed.ok) throw new Error('bad DNS address');
  return parsed.servers;
};

beforeAll(async () => {
  dns = await startDnsServer({
    '9.0.0.127.in-addr.arpa': { ptr: ['node9.mailsieve.test'] },
    'node9.mailsieve.test': { a: ['127.0.0.9'] },
    '9.0.0.127.bl.mailsieve.test': { a: ['127.0.0.2', '127.0.0.10'], txt: ['Spam source', 'since 2026'] },
    // Spamhaus's answer to a query it refuses (through an open resolver): not a listing.
    '9.0.0.127.zen.mailsieve.test': { a: ['127.255.255.254'] },
  });
});
afterAll(async () => {
  await dns?.close();
});

describe('checkSourceAddress', () => {
  it('names the reverse zone of IPv4 and IPv6 addresses', () => {
    expect(reverseName('203.0.113.10')).toBe('10.113.0.203.in-addr.arpa');
    expect(reverseName('2001:db8::567:89ab')).toBe(
      'b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    );
  });

  it('reports a listing with its codes and reason, and a refused query as not checked', async () => {
    const check = await checkSourceAddress({
      address: '127.0.0.9',
      heloName: 'node9.mailsieve.test',
      dnsServers: servers(),
      dnsbl: ['bl.mailsieve.test', 'zen.mailsieve.test', 'clean.mailsieve.test'],
    });
    expect(check).toMatchObject({
      ptr: { status: 'found', names: ['node9.mailsieve.test'] },
      confirmed_name: 'node9.mailsieve.test',
      helo: { name: 'node9.mailsieve.test', matches: true },
      is_listed: true,
      block_lists: [
        {
          zone: 'bl.mailsieve.test',
          status: 'listed',
          codes: ['127.0.0.2', '127.0.0.10'],
          reason: 'Spam source since 2026',
        },
        { zone: 'zen.mailsieve.test', status: 'unchecked' },
        { zone: 'clean.mailsieve.test', status: 'not-listed' },
      ],
    });
    expect(check.problems.map((problem) => problem.kind)).toEqual(['listed', 'unchecked']);
  });

  it('makes a node not ready while its address is listed, and ready when it could not be checked', async () => {
    const listed = new AddressSelfCheck({
      address: '127.0.0.9',
      dnsServers: servers(),
      dnsbl: ['bl.mailsieve.test'],
    });
    expect(listed.readiness().ok).toBe(true); // still checking
    await listed.start(() => undefined, 0);
    expect(listed.readiness()).toEqual({ ok: false, detail: '127.0.0.9 is listed on bl.mailsieve.test' });
    const unknown = new AddressSelfCheck({
      address: '127.0.0.9',
      dnsServers: servers(),
      dnsbl: ['zen.mailsieve.test'],
    });
    await unknown.start(() => undefined, 0);
    expect(unknown.readiness().ok).toBe(true);
    expect(new AddressSelfCheck(undefined, 'no source address was given').readiness()).toEqual({
      ok: true,
      detail: 'not checked: no source address was given',
    });
  });
});
