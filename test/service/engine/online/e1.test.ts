// Online checks through E1: a real service on port 0, keys whose checks level is dns or smtp, a real DNS
// server and real mail servers on loopback. Each status code of the issue is asserted here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clearBounces } from '../../../../service/identity/bounces.js';
import { importBouncesFile } from '../../../../service/identity/import.js';
import { tempDir } from '../../../helpers/service.js';
import { startWorld, type World } from './fixture.js';

let world: World;
let smtpKey: string;
let dnsKey: string;

beforeAll(async () => {
  world = await startWorld({}, 1);
  smtpKey = world.key({ checks: 'smtp' });
  dnsKey = world.key({ checks: 'dns' });
});
afterAll(() => world.close());

describe('E1 with DNS checks (key level dns)', () => {
  it('gives 20 with domain type biz for a domain with mail servers no list names, and asks no mail server', async () => {
    const before = world.farm.log('mailbox').connections;
    const { status, result } = await world.ev(dnsKey, 'alice@users.example.net');
    expect(status).toBe(200);
    expect(result).toEqual({
      address: 'alice@users.example.net',
      status: 'valid',
      status_code: 20,
      domain_type: 'biz',
    });
    expect(world.farm.log('mailbox').connections).toBe(before);
  });

  it('falls back to the domain’s own address when it has no MX (RFC 5321 §5.1)', async () => {
    const { result } = await world.ev(dnsKey, 'someone@fallback.example.net');
    expect(result).toMatchObject({ status_code: 20, domain_type: 'biz' });
  });

  it('gives 310 for a domain that does not exist (NXDOMAIN)', async () => {
    const { result } = await world.ev(dnsKey, 'someone@missing.example.net');
    expect(result).toMatchObject({ status: 'invalid', status_code: 310 });
  });

  it('gives 325 for a null MX and for a domain with neither MX nor address', async () => {
    expect((await world.ev(dnsKey, 'someone@nullmx.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 325,
    });
    expect((await world.ev(dnsKey, 'someone@nomail.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 325,
    });
  });

  it('gives unknown (5), never invalid, for SERVFAIL', async () => {
    const { result, explain } = await world.ev(dnsKey, 'someone@servfail.example.net', { explain: '1' });
    expect(result).toMatchObject({ status: 'unknown', status_code: 5 });
    expect(explain!.join('\n')).toMatch(/SERVFAIL/);
  });

  it('gives unknown (5) within the timeout when the DNS server never answers', async () => {
    const { result, ms, explain } = await world.ev(dnsKey, 'someone@silent.example.net', {
      timeout: '0.5',
      explain: 'true',
    });
    expect(result).toMatchObject({ status: 'unknown', status_code: 5 });
    expect(ms).toBeLessThan(1200);
    expect(explain!.join('\n')).toMatch(/no answer/i);
  });

  it('marks a domain whose MX is a parking service as parked', async () => {
    const { result } = await world.ev(dnsKey, 'someone@parked.example.net');
    expect(result).toMatchObject({ status_code: 20, domain_type: 'parked' });
  });

  it('does not correct the spelling of a domain with mail servers of its own; does for one that does not exist', async () => {
    const key = world.key({ checks: 'dns', services: ['validation', 'corrections'] });
    world.dns.setZone('gmiol.com', { mx: [[10, 'mx.users.example.net']] });
    const real = await world.ev(key, 'jane.doe@gmiol.com');
    expect(real.result).toEqual({
      address: 'jane.doe@gmiol.com',
      status: 'valid',
      status_code: 20,
      domain_type: 'biz',
    });
    const missing = await world.ev(key, 'jane.doe@gmaio.com');
    expect(missing.result).toMatchObject({ status_code: 310, email_corrections: ['jane.doe@gmail.com'] });
  });

  it('keeps the offline domain type of a known provider', async () => {
    const { result } = await world.ev(dnsKey, 'jane.doe.smith@gmail.com');
    expect(result).toMatchObject({ status_code: 20, domain_type: 'freeisp' });
  });

  it('resolves a domain once, however many addresses of it are checked at the same time', async () => {
    const before = world.dns.count('once.example.net');
    world.dns.setZone('once.example.net', { mx: [[10, 'mx.users.example.net']] });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => world.ev(dnsKey, `person${i}@once.example.net`)),
    );
    expect(answers.every((a) => a.result.status_code === 20)).toBe(true);
    expect(world.dns.count('once.example.net') - before).toBe(1);
    await world.ev(dnsKey, 'later@once.example.net');
    expect(world.dns.count('once.example.net') - before).toBe(1);
  });

  it('decides offline what offline checks decide, without asking DNS', async () => {
    const before = world.dns.queries.length;
    expect((await world.ev(dnsKey, 'no-at-sign.example.net')).result).toMatchObject({ status_code: 150 });
    expect((await world.ev(dnsKey, 'x@mailinator.com')).result).toMatchObject({
      status_code: 525,
      domain_type: 'disposable',
    });
    expect((await world.ev(dnsKey, 'abuse@users.example.net')).result).toMatchObject({ status_code: 500 });
    expect(world.dns.queries.length).toBe(before);
  });
});

describe('E1 with SMTP checks (key level smtp)', () => {
  it('gives 50 (safetosend) for a mailbox the server accepts when it refuses a random one', async () => {
    const { result } = await world.ev(smtpKey, 'alice@users.example.net');
    expect(result).toEqual({
      address: 'alice@users.example.net',
      status: 'safetosend',
      status_code: 50,
      domain_type: 'biz',
    });
    // The mailbox and one catch-all probe were asked of the server.
    const asked = world.farm.log('mailbox').rcpts.map((r) => r.address);
    expect(asked).toContain('alice@users.example.net');
    expect(
      asked.filter((a) => a.endsWith('@users.example.net') && !/^(alice|bob|carol|dave)@/.test(a)),
    ).toHaveLength(1);
  });

  it('uses STARTTLS when offered, accepting the self-signed certificate', async () => {
    const { explain } = await world.ev(smtpKey, 'bob@users.example.net', { explain: '1' });
    expect(world.farm.log('mailbox').secured).toBeGreaterThan(0);
    const text = explain!.join('\n');
    expect(text).toMatch(/C: STARTTLS/);
    expect(text).toMatch(/TLS established/);
  });

  it('gives 400 for 550 5.1.1 user unknown', async () => {
    expect((await world.ev(smtpKey, 'nobody@users.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 400,
    });
  });

  it('gives 410 for 552 mailbox full and for 452 4.2.2 over quota', async () => {
    expect((await world.ev(smtpKey, 'carol@users.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 410,
    });
    expect((await world.ev(smtpKey, 'dave@users.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 410,
    });
  });

  it('gives 420 when the server refuses mail for the recipient’s domain (relaying denied)', async () => {
    expect((await world.ev(smtpKey, 'someone@other.example.net')).result).toMatchObject({
      status: 'invalid',
      status_code: 420,
    });
  });

  it('gives 45 for an accept-all domain, probing it once however many addresses are checked', async () => {
    const addresses = ['ann@catchall.example.net', 'ben@catchall.example.net', 'cat@catchall.example.net'];
    const answers = await Promise.all(addresses.map((a) => world.ev(smtpKey, a)));
    for (const { result } of answers) expect(result).toMatchObject({ status: 'valid', status_code: 45 });
    const probes = world.farm
      .log('catchall')
      .rcpts.filter((r) => r.address.endsWith('@catchall.example.net') && !addresses.includes(r.address));
    expect(probes).toHaveLength(1);
    await world.ev(smtpKey, 'dan@catchall.example.net');
    expect(
      world.farm.log('catchall').rcpts.filter((r) => r.address.endsWith('@catchall.example.net')),
    ).toHaveLength(5);
  });

  it('reports code 45 as catchall / unverifiable for a key with legacy accept-all, and 50 as valid in legacy mode', async () => {
    const legacy = world.key({ checks: 'smtp', legacyAcceptAll: true });
    expect((await world.ev(legacy, 'eve@catchall.example.net')).result).toMatchObject({
      status: 'catchall',
      status_code: 45,
    });
    const validation = world.key({ checks: 'smtp', mode: 'email_validation', legacyAcceptAll: true });
    expect((await world.ev(validation, 'fay@catchall.example.net')).result).toMatchObject({
      status: 'unverifiable',
      status_code: 45,
    });
    expect((await world.ev(validation, 'alice@users.example.net')).result).toMatchObject({
      status: 'valid',
      status_code: 50,
    });
  });

  it('asks again after greylisting while the time lasts, then answers', async () => {
    const { result, explain } = await world.ev(smtpKey, 'gina@grey.example.net', {
      timeout: '5',
      explain: '1',
    });
    expect(result).toMatchObject({ status: 'safetosend', status_code: 50 });
    expect(explain!.join('\n')).toMatch(/451 4\.7\.1 Greylisted/);
    const asked = world.farm.log('grey').rcpts.filter((r) => r.address === 'gina@grey.example.net');
    expect(asked.map((r) => r.code)).toEqual([451, 250]);
  });

  it('gives unknown (5) when greylisting outlasts the timeout', async () => {
    // Greylisted for 150 ms, asked again after 150 ms: a 0.1 s timeout leaves no time to ask again.
    const { result, ms, explain } = await world.ev(smtpKey, 'gina.two@grey.example.net', {
      timeout: '0.1',
      explain: '1',
    });
    expect(result).toMatchObject({ status: 'unknown', status_code: 5 });
    expect(ms).toBeLessThan(600);
    expect(explain!.join('\n')).toMatch(/temporary refusal \(greylisting\?\), and no time is left/);
  });

  it('gives unknown (5) within the timeout for a server that never speaks', async () => {
    const { result, ms, explain } = await world.ev(smtpKey, 'sam@stall.example.net', {
      timeout: '0.6',
      explain: '1',
    });
    expect(result).toMatchObject({ status: 'unknown', status_code: 5, domain_type: 'biz' });
    expect(ms).toBeGreaterThanOrEqual(400);
    expect(ms).toBeLessThan(1100);
    expect(explain!.join('\n')).toMatch(/no greeting from the server/);
  });

  it('gives unknown (5) for a server that drops the connection and for one that refuses it', async () => {
    const dropped = await world.ev(smtpKey, 'dot@drop.example.net', { timeout: '2', explain: '1' });
    expect(dropped.result).toMatchObject({ status_code: 5 });
    expect(dropped.explain!.join('\n')).toMatch(/closed the connection/);
    const refused = await world.ev(smtpKey, 'rex@refused.example.net', { timeout: '2', explain: '1' });
    expect(refused.result).toMatchObject({ status_code: 5 });
    expect(refused.explain!.join('\n')).toMatch(/refused the connection/);
    expect(refused.ms).toBeLessThan(1000);
  });

  it('tries the next MX when the first refuses connections', async () => {
    const { result } = await world.ev(smtpKey, 'eve@busy.example.net', { timeout: '3' });
    expect(result).toMatchObject({ status_code: 50 });
  });

  it('never calls a mailbox invalid on a refusal aimed at the verifier (blocklist, sender policy)', async () => {
    const blocked = await world.ev(smtpKey, 'live.person@bigmail.example.net', { explain: '1' });
    expect(blocked.result).toMatchObject({ status: 'unknown', status_code: 5 });
    expect(blocked.explain!.join('\n')).toMatch(/block list/);
    const sender = await world.ev(smtpKey, 'live.person@strict.example.net');
    expect(sender.result).toMatchObject({ status: 'unknown', status_code: 5 });
    // The host that refused us is not asked again for the next address.
    const before = world.farm.log('blocklist').connections;
    expect((await world.ev(smtpKey, 'other.person@bigmail.example.net')).result).toMatchObject({
      status_code: 5,
    });
    expect(world.farm.log('blocklist').connections).toBe(before);
  });

  it('keeps DNS answers: 310, 325 and 5 on SERVFAIL, without contacting any mail server', async () => {
    expect((await world.ev(smtpKey, 'x@missing.example.net')).result).toMatchObject({ status_code: 310 });
    expect((await world.ev(smtpKey, 'x@nullmx.example.net')).result).toMatchObject({ status_code: 325 });
    expect((await world.ev(smtpKey, 'x@servfail.example.net')).result).toMatchObject({ status_code: 5 });
  });

  it('explains the conversation without the API key, and says what was decided offline', async () => {
    const { explain, body } = await world.ev(smtpKey, 'bob@users.example.net', { explain: '1' });
    const text = explain!.join('\n');
    expect(text).toMatch(/DNS \(127\.0\.0\.1:\d+\): users\.example\.net MX 10 mx\.users\.example\.net/);
    expect(text).toMatch(/C: MAIL FROM:<probe@mailsieve\.test>/);
    expect(text).toMatch(/C: RCPT TO:<bob@users\.example\.net>\nS: 250 Accepted/);
    expect(body).not.toContain(smtpKey);
    const offline = await world.ev(smtpKey, 'no-at-sign.example.net', { explain: '1' });
    expect(offline.explain!.join('\n')).toMatch(/Decided offline: 150/);
    // Without explain=1 the answer is exactly the spec's object.
    expect(
      Object.keys(JSON.parse((await world.ev(smtpKey, 'bob@users.example.net')).body) as object),
    ).toEqual(['safe_to_send']);
  });

  it('decides a known bouncer (520) offline: no DNS query, no mail server', async () => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'bounces.txt');
      writeFileSync(file, 'gone@users.example.net\n');
      await importBouncesFile(world.db, file);
      const key = world.key({ checks: 'smtp', knownBouncers: true });
      const queries = world.dns.queries.length;
      const connections = world.farm.log('mailbox').connections;
      const { result, explain } = await world.ev(key, 'gone@users.example.net', { explain: '1' });
      expect(result).toEqual({ address: 'gone@users.example.net', status: 'invalid', status_code: 520 });
      expect(explain!.join('\n')).toMatch(/Decided offline: 520 Matched to known bouncers/);
      expect(world.dns.queries.length).toBe(queries);
      expect(world.farm.log('mailbox').connections).toBe(connections);
      // The same address for a key without known bouncers goes online.
      expect((await world.ev(smtpKey, 'gone@users.example.net')).result.status_code).not.toBe(520);
    } finally {
      clearBounces(world.db);
      dir.remove();
    }
  });

  it('refuses a malformed explain parameter', async () => {
    expect((await world.ev(smtpKey, 'bob@users.example.net', { explain: 'maybe' })).status).toBe(400);
  });
});

describe('checks levels', () => {
  it('keeps an offline key offline: code 10, no DNS query', async () => {
    const offline = world.key({ checks: 'offline' });
    const before = world.dns.queries.length;
    expect((await world.ev(offline, 'alice@users.example.net')).result).toMatchObject({ status_code: 10 });
    expect(world.dns.queries.length).toBe(before);
  });

  it('defaults a new key to offline', async () => {
    const { createKey } = await import('../../../../service/store/keys.js');
    expect(createKey(world.db, { mode: 'safe_to_send', services: ['validation'] }).record.checks).toBe(
      'offline',
    );
  });
});
