// The evidence of every verdict in a list's explain CSV (issue 37): a real service whose online checks leave
// from a source address (`--source-address 127.0.0.1`) against the loopback mail world (test/helpers
// dnsServer.ts, smtpServer.ts), a plain list and a zip list. Each row's Step, Host, Reply, Source and Checked
// At are checked exactly: the mail host and its reply for an SMTP verdict, the domain and the DNS answer for a
// DNS one, the row's time and nothing else for one decided offline (by a list: the key's suppression).
import { zipSync, strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../engine/online/fixture.js';
import { lines, runList } from './helpers.js';

let world: World;

beforeAll(async () => {
  world = await startWorld({ sourceAddress: '127.0.0.1' }, 37);
});
afterAll(() => world.close());

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** The explain CSV's rows, each row's last field (Checked At) checked to be a time in [from, to] and cut off. */
async function explainOf(
  key: string,
  id: number,
  from: number,
  to: number,
): Promise<{ header: string; rows: string[] }> {
  const answer = await fetch(`${world.service.url}/v5/list/${id}/explain`, { headers: { api_key: key } });
  expect(answer.status).toBe(200);
  const [header, ...rows] = lines(await answer.text());
  return {
    header,
    rows: rows.map((row) => {
      const at = row.slice(row.lastIndexOf(',') + 1);
      expect(at, row).toMatch(TIME);
      // (To the second: the time may fall in the second the run started.)
      expect(Date.parse(at), row).toBeGreaterThanOrEqual(Math.floor(from / 1000) * 1000);
      expect(Date.parse(at), row).toBeLessThanOrEqual(to);
      return row.slice(0, row.lastIndexOf(','));
    }),
  };
}

const HEADER = 'Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At';
const BLOCKED =
  "550 5.7.1 Unfortunately, messages from [127.0.0.1] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3140).";

describe('the evidence of every verdict (explain CSV)', () => {
  it('says per row the step, the host, its reply, the source address and when', async () => {
    const key = world.key({ checks: 'smtp', suppress: ['gone@users.example.net'] });
    const body = [
      'email',
      'alice@users.example.net',
      'nobody@users.example.net',
      'carol@users.example.net',
      'ann@catchall.example.net',
      'someone@missing.example.net',
      'someone@nullmx.example.net',
      'someone@nomail.example.net',
      'someone@bigmail.example.net',
      'abuse@users.example.net',
      'not-an-address',
      'gone@users.example.net',
      'alice@users.example.net',
    ].join('\n');
    const from = Date.now();
    const { list } = await runList(world.service.url, key, `${body}\n`, { query: { header: 'true' } });
    const to = Date.now();
    expect(list.status).toBe('Results');
    const explain = await explainOf(key, list.list_id, from, to);
    expect(explain.header).toBe(HEADER);
    expect(explain.rows).toEqual([
      '1,alice@users.example.net,50,smtp,mx.users.example.net: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused),smtp,mx.users.example.net,250 Accepted,127.0.0.1',
      '2,nobody@users.example.net,400,smtp,mx.users.example.net: 550 5.1.1 User unknown,smtp,mx.users.example.net,550 5.1.1 User unknown,127.0.0.1',
      '3,carol@users.example.net,410,smtp,mx.users.example.net: 552 5.2.2 Mailbox full,smtp,mx.users.example.net,552 5.2.2 Mailbox full,127.0.0.1',
      '4,ann@catchall.example.net,45,smtp,mx.catchall.example.net: the mailbox was accepted; the domain accepts any address (a random one was accepted),smtp,mx.catchall.example.net,250 Accepted,127.0.0.1',
      '5,someone@missing.example.net,310,dns,DNS: missing.example.net does not exist (NXDOMAIN),dns,missing.example.net,NXDOMAIN,127.0.0.1',
      '6,someone@nullmx.example.net,325,dns,DNS: nullmx.example.net has a null MX (MX 0 .): the domain takes no mail,dns,nullmx.example.net,null MX,127.0.0.1',
      '7,someone@nomail.example.net,325,dns,DNS: nomail.example.net has no MX and no address: the domain takes no mail,dns,nomail.example.net,no MX and no address,127.0.0.1',
      `8,someone@bigmail.example.net,5,smtp,"mx.bigmail.example.net answered ${BLOCKED}: a refusal of this verifier, not of the mailbox",smtp,mx.bigmail.example.net,"${BLOCKED}",127.0.0.1`,
      '9,abuse@users.example.net,500,offline,decided offline: Usernames of this kind not accepted,syntax,,,',
      '10,not-an-address,150,offline,decided offline: No @ sign,syntax,,,',
      '11,gone@users.example.net,255,offline,decided offline: Not allowed by client-configured suppression,list,,,',
      '12,alice@users.example.net,50,smtp,mx.users.example.net: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused),smtp,mx.users.example.net,250 Accepted,127.0.0.1',
    ]);
  }, 60_000);

  it('a zip list’s explain CSV carries the same columns', async () => {
    const key = world.key({ checks: 'dns' });
    const csv = 'email\nbob@users.example.net\nsomeone@missing.example.net\nnot-an-address\n';
    const zip = zipSync({ 'people.csv': strToU8(csv) });
    const from = Date.now();
    const { list, results } = await runList(world.service.url, key, zip, {
      fileName: 'people.zip',
      query: { header: 'true' },
    });
    const to = Date.now();
    expect(list.status).toBe('Results');
    expect(results?.headers.get('content-type')).toBe('application/zip');
    const explain = await explainOf(key, list.list_id, from, to);
    expect(explain.header).toBe(HEADER);
    expect(explain.rows).toEqual([
      '1,bob@users.example.net,20,dns,DNS: users.example.net MX mx.users.example.net; the mailbox was not asked,dns,users.example.net,MX mx.users.example.net,127.0.0.1',
      '2,someone@missing.example.net,310,dns,DNS: missing.example.net does not exist (NXDOMAIN),dns,missing.example.net,NXDOMAIN,127.0.0.1',
      '3,not-an-address,150,offline,decided offline: No @ sign,syntax,,,',
    ]);
  }, 60_000);
});
