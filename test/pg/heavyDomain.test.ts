// A list dominated by one domain on a team server uses every verifier node (issue 26, point 5): a node's pace at
// a mail server is its own source address's allowance, so three nodes on 127.0.0.3/.4/.5 each ask a fair share
// of the domain's mailboxes, through connections of their own, with default options. Against a real Postfix:
// its log names the client address of every conversation and how many recipients it asked. (The node that
// planned the list used to take every part of it, and the others sat idle.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../shared/api/list.js';
import { startTeam, type TeamCluster, type TeamProcess } from '../helpers/team.js';
import { postfixMissing, startPostfix, type PostfixWorld } from '../helpers/postfix.js';
import { getResults, getStatus, submit } from '../service/lists/helpers.js';

const DOMAIN = 'heavymail.net';
const ROWS = 300;
const NODES = ['127.0.0.3', '127.0.0.4', '127.0.0.5'];
const users = Array.from({ length: ROWS }, (_, i) => `user${i}`);
/** 60% of the addresses are real mailboxes. */
const isReal = (i: number) => i % 5 < 3;

let team: TeamCluster;
let api: TeamProcess;
let world: PostfixWorld;

beforeAll(async () => {
  const missing = postfixMissing();
  if (missing) throw new Error(missing);
  world = await startPostfix({
    domains: [{ name: DOMAIN, users: users.filter((_, i) => isReal(i)) }],
    zones: {
      'mailsieve.test': { mx: [[10, 'mx.mailsieve.test']] },
      'mx.mailsieve.test': { a: ['127.0.0.9'] },
    },
  });
  team = await startTeam();
  api = await team.api();
  await Promise.all(
    NODES.map((ip, i) =>
      team.worker(ip, [
        '--helo-name',
        `verifier${i + 1}.mailsieve.test`,
        '--mail-from',
        'check@mailsieve.test',
        ...world.network,
        '--allow-private-mx',
      ]),
    ),
  );
}, 120_000);

afterAll(async () => {
  await team?.close();
  await world?.close();
});

/**
 * Conversations opened and recipients refused, by client address, from Postfix's log (a refused recipient is
 * logged with its client at once; an accepted one is not, and a conversation is summed up only once closed).
 */
function perClient(log: string): Map<string, { sessions: number; refused: number }> {
  const out = new Map<string, { sessions: number; refused: number }>();
  const of = (ip: string) => {
    const client = out.get(ip) ?? { sessions: 0, refused: 0 };
    out.set(ip, client);
    return client;
  };
  for (const match of log.matchAll(/\]: connect from [^[]*\[([\d.]+)\]/g)) of(match[1]).sessions++;
  for (const match of log.matchAll(/reject: RCPT from [^[]*\[([\d.]+)\]/g)) of(match[1]).refused++;
  return out;
}

describe('a team server with a list of one domain', () => {
  it('has every verifier node check a fair share of its mailboxes, each through its own connections', async () => {
    const key = await team.key(['--checks', 'smtp']);
    const body = ['email', ...users.map((user) => `${user}@${DOMAIN}`)].join('\n') + '\n';
    const sent = await submit(api.url, key, body, { query: { header: 'true', name: 'heavy.csv' } });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json<{ list_id: number }>().list_id;
    const deadline = Date.now() + 150_000;
    let list: ListResource;
    for (;;) {
      list = listResourceSchema.parse((await getStatus(api.url, key, id)).json());
      if (!['Pending', 'Processing'].includes(list.status)) break;
      if (Date.now() > deadline) throw new Error(`the list is still ${list.status}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(list.status).toBe('Results');

    // Every row its right code.
    const results = await getResults(api.url, key, id);
    const [header, ...rows] = results.text.trim().split('\n');
    const codeAt = header.split(',').indexOf('Validation Code');
    expect(rows).toHaveLength(ROWS);
    rows.forEach((row, i) => expect(row.split(',')[codeAt], row).toBe(isReal(i) ? '50' : '400'));

    // Each node asked at least a fifth of the unknown users (a fair share is a third), on its own connections.
    const unknown = ROWS - users.filter((_, i) => isReal(i)).length;
    const clients = perClient(world.log());
    const shares = JSON.stringify([...clients]);
    // Every unknown user refused once, besides the catch-all probes' random addresses.
    const refused = [...clients.values()].reduce((sum, client) => sum + client.refused, 0);
    expect(refused, shares).toBeGreaterThanOrEqual(unknown);
    expect(refused, shares).toBeLessThanOrEqual(unknown + NODES.length);
    for (const ip of NODES) {
      expect(clients.get(ip)?.sessions ?? 0, `${ip}: ${shares}`).toBeGreaterThan(0);
      expect(clients.get(ip)?.refused ?? 0, `${ip}: ${shares}`).toBeGreaterThanOrEqual(unknown / 5);
    }
  }, 200_000);
});
