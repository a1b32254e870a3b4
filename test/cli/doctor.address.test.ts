// `mailsieve doctor --source-address IP`: the address checked as mail servers check it — its reverse DNS name
// (PTR), whether that name resolves back to it, whether the HELO name is that name, and DNS block lists — each
// against a loopback DNS server of the test's own (with PTR and TXT records) and a loopback mail farm for the
// rest of doctor's checks, through the built CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { SERVERS, zones } from '../service/engine/online/fixture.js';

let dns: TestDnsServer;
let farm: MailFarm;

beforeAll(async () => {
  farm = await startMailFarm({ mailbox: SERVERS.mailbox }, 23);
  const all = zones(farm);
  dns = await startDnsServer({
    'gmail.com': all['gmail.com'],
    'gmail-smtp-in.l.google.com': all['gmail-smtp-in.l.google.com'],
    'mailsieve.test': all['mailsieve.test'],
    'mx.mailsieve.test': all['mx.mailsieve.test'],
    // 127.0.0.5: all in order. 127.0.0.6: no PTR. 127.0.0.7: a PTR, its name resolving back. 127.0.0.8: listed.
    '5.0.0.127.in-addr.arpa': { ptr: ['verifier5.mailsieve.test'] },
    'verifier5.mailsieve.test': { a: ['127.0.0.5'] },
    '7.0.0.127.in-addr.arpa': { ptr: ['verifier7.mailsieve.test'] },
    'verifier7.mailsieve.test': { a: ['127.0.0.7'] },
    '8.0.0.127.in-addr.arpa': { ptr: ['verifier8.mailsieve.test'] },
    'verifier8.mailsieve.test': { a: ['127.0.0.8'] },
    '8.0.0.127.bl.mailsieve.test': {
      a: ['127.0.0.4'],
      txt: ['Listed by bl.mailsieve.test, see https://bl.mailsieve.test/lookup'],
    },
    // A block list that never answers (as one does from a network that cannot reach it).
    '5.0.0.127.silent.mailsieve.test': { silent: true },
  });
});

afterAll(async () => {
  await dns?.close();
  await farm?.close();
});

const doctor = (address: string, helo: string, more: string[] = []) =>
  runCli([
    'doctor',
    '--dns-servers',
    dns.address,
    '--smtp-port',
    String(farm.port),
    '--source-address',
    address,
    '--helo-name',
    helo,
    '--mail-from',
    'check@mailsieve.test',
    '--dnsbl',
    'bl.mailsieve.test',
    ...more,
  ]);

describe('mailsieve doctor --source-address', () => {
  it('finds a matching PTR that resolves back, the HELO name its name, not listed: exit 0', async () => {
    const result = await doctor('127.0.0.5', 'verifier5.mailsieve.test');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Address {2}ok {4}127\.0\.0\.5: reverse DNS confirmed and the HELO name matches; not listed\.$/m,
    );
    expect(result.stdout).toMatch(
      /Reverse DNS of 127\.0\.0\.5: verifier5\.mailsieve\.test \(resolves back to 127\.0\.0\.5\)/,
    );
    expect(result.stdout).toMatch(/Block list bl\.mailsieve\.test: not listed/);
    // Asked from the address itself.
    expect(dns.count('5.0.0.127.in-addr.arpa', 'PTR')).toBeGreaterThan(0);
  });

  it('says an address without a PTR needs one, and what to ask for', async () => {
    const result = await doctor('127.0.0.6', 'verifier6.mailsieve.test', ['--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      address: { ok: boolean; ptr: { status: string }; problems: { kind: string; text: string }[] };
    };
    expect(report.address.ok).toBe(false);
    expect(report.address.ptr.status).toBe('missing');
    expect(report.address.problems).toEqual([
      {
        kind: 'no-ptr',
        text: expect.stringMatching(
          /^127\.0\.0\.6 has no reverse DNS name \(PTR record\): many mail servers refuse or distrust .* set its PTR to this node's HELO name, and that name's A record to 127\.0\.0\.6$/,
        ) as unknown,
      },
    ]);
    const text = await doctor('127.0.0.6', 'verifier6.mailsieve.test');
    expect(text.stdout).toMatch(
      /^Address {2}WARN {2}127\.0\.0\.6 is not listed, but mail servers may distrust it/m,
    );
    expect(text.stdout).toMatch(/Problem: 127\.0\.0\.6 has no reverse DNS name \(PTR record\)/);
  });

  it('says a HELO name that is not the address’s reverse name, and which name to give', async () => {
    const result = await doctor('127.0.0.7', 'other.mailsieve.test');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/HELO name other\.mailsieve\.test: does not match/);
    expect(result.stdout).toContain(
      'Problem: The HELO name other.mailsieve.test is not the reverse name of 127.0.0.7 (verifier7.mailsieve.test): ' +
        'many mail servers compare them. Give verifier7.mailsieve.test as the HELO name, or set the PTR to other.mailsieve.test.',
    );
  });

  it('exits non-zero for a listed address, with the list’s reason', async () => {
    const result = await doctor('127.0.0.8', 'verifier8.mailsieve.test');
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Address {2}FAIL {2}127\.0\.0\.8 is on a DNS block list/m);
    expect(result.stdout).toContain(
      'Block list bl.mailsieve.test: LISTED (127.0.0.4) Listed by bl.mailsieve.test, see https://bl.mailsieve.test/lookup',
    );
    expect(result.stdout).toMatch(
      /LISTED: 127\.0\.0\.8 is listed on bl\.mailsieve\.test .* Ask the list for its removal/,
    );
    expect(result.stderr).toBe(
      'mailsieve: the source address 127.0.0.8 is listed on bl.mailsieve.test: use another address or ask for its removal (see above).\n',
    );
  });

  it('says a block list that does not answer could not be checked, within seconds, and that is not listed', async () => {
    const started = Date.now();
    const result = await doctor('127.0.0.5', 'verifier5.mailsieve.test', [
      '--dnsbl',
      'silent.mailsieve.test',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /Block list silent\.mailsieve\.test: could not check \(.*did not answer in time/,
    );
    expect(result.stdout).toMatch(/^Address {2}WARN {2}127\.0\.0\.5 is not listed/m);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
