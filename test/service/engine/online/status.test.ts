// GET /v5/status against a world where DNS and mail servers answer on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from '../../../helpers/service.js';
import { startWorld, type World } from './fixture.js';

let world: World;
beforeAll(async () => {
  world = await startWorld({ checks: 'dns' }, 3);
});
afterAll(() => world.close());

describe('GET /v5/status', () => {
  it('needs a key', async () => {
    const response = await get(`${world.service.url}/v5/status`);
    expect(response.status).toBe(401);
    expect(response.text).toBe('Invalid API key.');
  });

  it('says which checks the key gets, capped by the service, and that DNS and port 25 work', async () => {
    const key = world.key({ checks: 'smtp' });
    const response = await get(`${world.service.url}/v5/status`, { headers: { api_key: key } });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.text) as Record<string, unknown>;
    expect(body).toMatchObject({
      checks: 'dns',
      key_checks: 'smtp',
      service_checks: 'dns',
      dns: { ok: true, servers: [world.dns.address] },
      smtp: { ok: true, port: world.farm.port },
      identity: { helo_name: 'verifier.mailsieve.test', mail_from: 'probe@mailsieve.test', ok: true },
    });
    expect(JSON.stringify(body)).not.toContain(key);
    expect((body.smtp as { detail: string }).detail).toMatch(
      /reachable: gmail-smtp-in\.l\.google\.com \[127\.0\.3\.\d+\] greeted "220 /,
    );
  });

  it('caches the preflight, so calling it often does not multiply outbound connections', async () => {
    const key = world.key({ checks: 'offline' });
    const before = world.farm.log('mailbox').connections;
    for (let i = 0; i < 5; i++)
      expect((await get(`${world.service.url}/v5/status?api_key=${key}`)).status).toBe(200);
    expect(world.farm.log('mailbox').connections - before).toBeLessThanOrEqual(1);
  });

  it('caps a key at the service level in E1 too: an smtp key on a dns service gets 20 and no SMTP', async () => {
    const key = world.key({ checks: 'smtp' });
    const before = world.farm.log('mailbox').rcpts.length;
    expect((await world.ev(key, 'alice@users.example.net')).result).toMatchObject({ status_code: 20 });
    expect(world.farm.log('mailbox').rcpts.length).toBe(before);
  });
});
