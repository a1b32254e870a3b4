// Per-host concurrency and pacing, counted at the mail server: a burst of checks at one domain never opens
// more conversations than allowed, new connections keep their distance, and conversations are reused.
import { afterEach, describe, expect, it } from 'vitest';
import { startWorld, type World } from './fixture.js';

let world: World | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const users = ['alice', 'bob', 'carol', 'dave', 'nobody', 'someone', 'x1', 'x2', 'x3', 'x4'].map(
  (u) => `${u}@users.example.net`,
);

describe('pacing', () => {
  it('holds one conversation at a time with a host at concurrency 1, reusing it for every address', async () => {
    world = await startWorld({ smtpConcurrency: 1, smtpPacingMs: 50, smtpIdleMs: 5000 }, 4);
    const key = world.key();
    const answers = await Promise.all(users.map((u) => world!.ev(key, u, { timeout: '5' })));
    expect(answers.map((a) => a.result.status_code)).toEqual([
      50, 50, 410, 410, 400, 400, 400, 400, 400, 400,
    ]);
    const log = world.farm.log('mailbox');
    expect(log.peak).toBe(1);
    expect(log.connections).toBe(1);
    expect(log.rcpts).toHaveLength(users.length + 1); // and one catch-all probe
  });

  it('asks a domain’s few addresses and its catch-all probe in one conversation, even when two are allowed', async () => {
    world = await startWorld({ smtpConcurrency: 2, smtpPacingMs: 50, smtpIdleMs: 5000 }, 4);
    const key = world.key();
    const answers = await Promise.all(users.map((u) => world!.ev(key, u, { timeout: '5' })));
    expect(answers.map((a) => a.result.status_code)).toEqual([
      50, 50, 410, 410, 400, 400, 400, 400, 400, 400,
    ]);
    const log = world.farm.log('mailbox');
    expect(log.connections).toBe(1);
    expect(log.rcpts).toHaveLength(users.length + 1);
  });

  it('opens at most N conversations at once, new ones at least the pacing interval apart', async () => {
    world = await startWorld({ smtpConcurrency: 2, smtpPacingMs: 120, smtpMaxRcptPerSession: 1 }, 5);
    const key = world.key();
    await Promise.all(users.slice(4).map((u) => world!.ev(key, u, { timeout: '10' })));
    const log = world.farm.log('mailbox');
    expect(log.peak).toBeLessThanOrEqual(2);
    expect(log.connections).toBe(6);
    const gaps = log.connectedAt.slice(1).map((at, i) => at - log.connectedAt[i]);
    // Paced 120 ms apart when sent; the server's clock may see a little less.
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(90);
  });
});
