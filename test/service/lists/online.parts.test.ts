// A list cut into parts is checked as one: its parts start checking together and walk the domains in one
// order, so each domain's addresses from every part go through one conversation with its mail server, as
// when the list was checked in one piece (the online-list bench lost 5× its speed to a connection per part
// and domain). Parts of 2 rows, one part at a time (`parts: 1`) and conversations kept idle only 1 ms: only
// parts that ask a domain at the same time can share its conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../engine/online/fixture.js';
import { lines, runList } from './helpers.js';

let world: World;

beforeAll(async () => {
  world = await startWorld({ smtpIdleMs: 1 }, 13, { partRows: 2, parts: 1 });
});
afterAll(() => world.close());

const ROWS: [string, string][] = [
  ['alice@users.example.net', '50'],
  ['ann@catchall.example.net', '45'],
  ['bob@users.example.net', '50'],
  ['ben@catchall.example.net', '45'],
  ['nobody@users.example.net', '400'],
  ['cat@catchall.example.net', '45'],
  ['carol@users.example.net', '410'],
  ['dan@catchall.example.net', '45'],
];

describe('a list in parts, online', () => {
  it('asks each domain through one conversation, whatever the part its rows are in', async () => {
    const before = {
      mailbox: world.farm.log('mailbox').connections,
      catchall: world.farm.log('catchall').connections,
    };
    const body = ['email', ...ROWS.map(([address]) => address)].join('\n') + '\n';
    const { list, results } = await runList(world.service.url, world.key({ checks: 'smtp' }), body, {
      query: { header: 'true' },
    });
    expect(list.status).toBe('Results');
    const [header, ...rows] = lines(results!.text);
    const code = header.split(',').indexOf('Validation Code');
    expect(rows.map((row) => [row.split(',')[0], row.split(',')[code]])).toEqual(ROWS);
    expect({
      mailbox: world.farm.log('mailbox').connections - before.mailbox,
      catchall: world.farm.log('catchall').connections - before.catchall,
    }).toEqual({ mailbox: 1, catchall: 1 });
  }, 60_000);
});
