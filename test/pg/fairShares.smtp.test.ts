// Fair shares between keys at the SMTP level (test/pg/fairShares.test.ts does the offline level): client B's
// small list, submitted while client A's list of many parts is being checked against a mail server, reaches
// Results within twice its time alone plus 2 s, because the queue hands out B's part before A's waiting ones.
// One verifier node working on one part at a time, so that the order of the queue is all that decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema } from '../../shared/api/list.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dnsServer.js';
import { startMailFarm, type MailFarm } from '../helpers/smtpServer.js';
import { startTeam, type TeamCluster, type TeamProcess, mailFarmArgs } from '../helpers/team.js';
import { getStatus, submit } from '../service/lists/helpers.js';

let team: TeamCluster;
let api: TeamProcess;
let farm: MailFarm;
let dns: TestDnsServer;

const USERS = Array.from({ length: 4_000 }, (_, i) => `user${i}@users.example.net`);

beforeAll(async () => {
  farm = await startMailFarm(
    { mailbox: { kind: 'smtp', domains: ['users.example.net'], users: USERS, tls: false } },
    41,
  );
  dns = await startDnsServer({
    'users.example.net': { mx: [[10, 'mx.users.example.net']] },
    'mx.users.example.net': { a: [farm.ip('mailbox')] },
  });
  team = await startTeam();
  [api] = await Promise.all([
    team.api(),
    team.worker('127.0.0.2', [
      ...mailFarmArgs(dns, farm),
      '--part-rows',
      '100',
      '--parts',
      '1',
      // The mail farm is on loopback, which a worker does not ask unless told to.
      '--allow-private-mx',
    ]),
  ]);
}, 60_000);

afterAll(async () => {
  await team?.close();
  await dns?.close();
  await farm?.close();
});

const body = (from: number, rows: number) => `email\n${USERS.slice(from, from + rows).join('\n')}\n`;

async function send(key: string, text: string): Promise<number> {
  const sent = await submit(api.url, key, text, { query: { header: 'true' }, as: 'text' });
  expect(sent.status, sent.text).toBe(202);
  return sent.json<{ list_id: number }>().list_id;
}

const statusOf = async (key: string, id: number) =>
  listResourceSchema.parse((await getStatus(api.url, key, id)).json());

/** Seconds from submission to Results. */
async function timed(key: string, text: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  const id = await send(key, text);
  for (;;) {
    const { status } = await statusOf(key, id);
    if (status === 'Results') return (Date.now() - started) / 1000;
    if (status === 'Invalid' || status === 'Error') throw new Error(`list ${id} ended ${status}`);
    if (Date.now() - started > timeoutMs) throw new Error(`list ${id} still ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('fair shares between keys at the SMTP level', { timeout: 240_000 }, () => {
  it("gives B's small list its results within 2x its time alone + 2 s while A's list of many parts runs", async () => {
    const keyA = await team.key(['--checks', 'smtp']);
    const keyB = await team.key(['--checks', 'smtp']);
    await timed(keyB, body(0, 100));
    const alone = Math.max(await timed(keyB, body(100, 100)), await timed(keyB, body(200, 100)));
    // A: 30 parts of 100 rows.
    const idA = await send(keyA, body(400, 3_000));
    // A's parts are being checked when B's list comes.
    for (;;) {
      const list = await statusOf(keyA, idA);
      if (list.status === 'Processing' && list.services.email_validation!.completed_count > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const behind = await timed(keyB, body(300, 100));
    const a = await statusOf(keyA, idA);
    expect(behind, `B took ${behind} s behind A (A ${a.status}), ${alone} s alone`).toBeLessThanOrEqual(
      2 * alone + 2,
    );
    expect(a.status).toBe('Processing');
  });
});
