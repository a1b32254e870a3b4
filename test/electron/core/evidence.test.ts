// The evidence reader (issue 37, "Keep the evidence of every verdict"): an older explain file (five columns:
// the host and reply read from the Why), a new one (Step, Host, Reply, Source, Checked At), plain or kept as the
// app keeps it (blocked gzip: keepEvidence), a re-checked row read from the latest re-check's file by address,
// and the Results screen's whys read from a kept file a block at a time. Real files in a temporary folder.
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { Evidence } from '../../../shared/outcomes.js';
import {
  explainLine,
  EXPLAIN_HEADER,
  type ExplainedRow,
} from '../../../service/lists/pipeline/partWriter.js';
import {
  keepEvidence,
  readEvidence,
  scanEvidence,
  type JobEvidence,
} from '../../../electron/core/results/evidence.js';
import { readBlocks } from '../../../electron/core/results/evidenceFile.js';
import { indexExplain, readWhys } from '../../../electron/core/results/resultsFile.js';
import { tempDir } from '../../helpers/service.js';
import { syntheticExplain, writeSyntheticEvidence } from '../../helpers/evidenceData.js';

const dir = tempDir('mailsieve-evidence-');
afterAll(() => dir.remove());
const write = (name: string, text: string | Buffer) => {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
};

async function allOf(source: string | JobEvidence): Promise<[number, Evidence][]> {
  const seen: [number, Evidence][] = [];
  await scanEvidence(source, (row, evidence) => seen.push([row, evidence]));
  return seen;
}

async function keep(name: string, csv: string): Promise<string> {
  const path = join(dir.path, name);
  // In pieces that cut rows (and a quoted field) in two, as a download does.
  const pieces: Buffer[] = [];
  for (let at = 0; at < csv.length; at += 7) pieces.push(Buffer.from(csv.slice(at, at + 7)));
  await keepEvidence(pieces, path);
  return path;
}

const smtp = (email: string, host: string, reply: string, why: string, at: string): ExplainedRow => ({
  email,
  checked: 'smtp',
  why,
  host,
  reply,
  source: 'socks5 proxy 127.0.0.1:1080',
  checkedAt: at,
});

/** A new explain file, as the service writes it (partWriter's own lines). */
const NEW_CSV =
  EXPLAIN_HEADER +
  explainLine(
    1,
    'ann@example.com',
    50,
    smtp(
      'ann@example.com',
      'mx1.example.com',
      '250 2.1.5 OK',
      'mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
      '2026-11-12T09:00:01Z',
    ),
    '2026-11-12T09:05:00Z',
  ) +
  explainLine(
    2,
    'bob@example.com',
    400,
    smtp(
      'bob@example.com',
      'mx1.example.com',
      '550 5.1.1 "bob", no such user',
      'mx1.example.com: 550 5.1.1 "bob", no such user',
      '2026-11-12T09:00:02Z',
    ),
    '2026-11-12T09:05:00Z',
  ) +
  explainLine(
    3,
    'cy@gone.example',
    310,
    {
      email: 'cy@gone.example',
      checked: 'dns',
      why: 'DNS: gone.example does not exist (NXDOMAIN)',
      host: 'gone.example',
      reply: 'NXDOMAIN',
      source: '192.0.2.7',
      checkedAt: '2026-11-12T09:00:03Z',
    },
    '2026-11-12T09:05:00Z',
  ) +
  explainLine(4, 'bounced@example.com', 520, undefined, '2026-11-12T09:05:00Z') +
  explainLine(5, 'not an address', 150, undefined, '2026-11-12T09:05:00Z');

const NEW_EVIDENCE: [number, Evidence][] = [
  [
    1,
    {
      step: 'smtp',
      host: 'mx1.example.com',
      reply: '250 2.1.5 OK',
      source: 'socks5 proxy 127.0.0.1:1080',
      checkedAt: '2026-11-12T09:00:01Z',
      why: 'mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
    },
  ],
  [
    2,
    {
      step: 'smtp',
      host: 'mx1.example.com',
      reply: '550 5.1.1 "bob", no such user',
      source: 'socks5 proxy 127.0.0.1:1080',
      checkedAt: '2026-11-12T09:00:02Z',
      why: 'mx1.example.com: 550 5.1.1 "bob", no such user',
    },
  ],
  [
    3,
    {
      step: 'dns',
      host: 'gone.example',
      reply: 'NXDOMAIN',
      source: '192.0.2.7',
      checkedAt: '2026-11-12T09:00:03Z',
      why: 'DNS: gone.example does not exist (NXDOMAIN)',
    },
  ],
  [
    4,
    {
      step: 'list',
      host: '',
      reply: '',
      source: '',
      checkedAt: '2026-11-12T09:05:00Z',
      why: 'decided offline: Matched to known bouncers',
    },
  ],
  [
    5,
    {
      step: 'syntax',
      host: '',
      reply: '',
      source: '',
      checkedAt: '2026-11-12T09:05:00Z',
      why: 'decided offline: No @ sign',
    },
  ],
];

describe('the evidence of every verdict', () => {
  it('writes the evidence columns after the Why: offline rows by code, with the row’s time', () => {
    expect(NEW_CSV.split('\n')).toEqual([
      'Row,Email,Status Code,Checked,Why,Step,Host,Reply,Source,Checked At',
      '1,ann@example.com,50,smtp,mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused),smtp,mx1.example.com,250 2.1.5 OK,socks5 proxy 127.0.0.1:1080,2026-11-12T09:00:01Z',
      '2,bob@example.com,400,smtp,"mx1.example.com: 550 5.1.1 ""bob"", no such user",smtp,mx1.example.com,"550 5.1.1 ""bob"", no such user",socks5 proxy 127.0.0.1:1080,2026-11-12T09:00:02Z',
      '3,cy@gone.example,310,dns,DNS: gone.example does not exist (NXDOMAIN),dns,gone.example,NXDOMAIN,192.0.2.7,2026-11-12T09:00:03Z',
      '4,bounced@example.com,520,offline,decided offline: Matched to known bouncers,list,,,,2026-11-12T09:05:00Z',
      '5,not an address,150,offline,decided offline: No @ sign,syntax,,,,2026-11-12T09:05:00Z',
      '',
    ]);
  });

  it('reads an older file (five columns): the host and reply of an SMTP row from its Why', async () => {
    const old = write(
      'old.csv',
      [
        'Row,Email,Status Code,Checked,Why',
        '1,ann@example.com,50,smtp,mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
        '2,bob@example.com,400,smtp,mx1.example.com: 550 5.1.1 User unknown',
        '3,cy@gone.example,310,dns,DNS: gone.example does not exist (NXDOMAIN)',
        '4,bounced@example.com,520,offline,decided offline: Matched to known bouncers',
      ].join('\n') + '\n',
    );
    const blank = { source: '', checkedAt: '' };
    expect(await allOf(old)).toEqual([
      [
        1,
        {
          step: 'smtp',
          host: '',
          reply: '',
          ...blank,
          why: 'mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)',
        },
      ],
      [
        2,
        {
          step: 'smtp',
          host: 'mx1.example.com',
          reply: '550 5.1.1 User unknown',
          ...blank,
          why: 'mx1.example.com: 550 5.1.1 User unknown',
        },
      ],
      [3, { step: 'dns', host: '', reply: '', ...blank, why: 'DNS: gone.example does not exist (NXDOMAIN)' }],
      [4, { step: 'list', host: '', reply: '', ...blank, why: 'decided offline: Matched to known bouncers' }],
    ]);
    expect(await allOf(join(dir.path, 'none.csv'))).toEqual([]);
    expect(await scanEvidence(join(dir.path, 'none.csv'), () => undefined)).toBe(false);
  });

  it('reads a new file plain and kept (gzip) alike; the kept file is the CSV to any gunzip', async () => {
    const plain = write('new.csv', NEW_CSV);
    const kept = await keep('new.csv.gz', NEW_CSV);
    expect(gunzipSync(readFileSync(kept)).toString('utf8')).toBe(NEW_CSV);
    expect(await allOf(plain)).toEqual(NEW_EVIDENCE);
    expect(await allOf(kept)).toEqual(NEW_EVIDENCE);
    expect([...(await readEvidence(kept, [5, 2, 9]))]).toEqual([NEW_EVIDENCE[1], NEW_EVIDENCE[4]]);
    // The Results screen's why per row, from either.
    for (const path of [plain, kept])
      expect(readWhys(path, await indexExplain(path), [2, 9, 1])).toEqual([
        'mx1.example.com: 550 5.1.1 "bob", no such user',
        '',
        NEW_EVIDENCE[0][1].why,
      ]);
  });

  it('gives a re-checked row its latest re-check’s evidence, found by address', async () => {
    const first = await keep('explain.csv.gz', NEW_CSV);
    const at = (time: string, code: number, reply: string) =>
      EXPLAIN_HEADER +
      explainLine(
        1,
        'BOB@example.com ',
        code,
        smtp('BOB@example.com ', 'mx2.example.com', reply, `mx2.example.com: ${reply}`, time),
        time,
      );
    // Version 2 asked bob again (still refused, later); version 3 asked again and was accepted.
    const v2 = await keep('explain-v2.csv.gz', at('2026-11-20T10:00:00Z', 400, '550 5.1.1 Gone'));
    const v3 = write('explain-v3.csv', at('2026-11-27T10:00:00Z', 50, '250 2.1.5 OK'));
    const job: JobEvidence = { path: first, rechecks: [v3, v2] };
    const latest: Evidence = {
      step: 'smtp',
      host: 'mx2.example.com',
      reply: '250 2.1.5 OK',
      source: 'socks5 proxy 127.0.0.1:1080',
      checkedAt: '2026-11-27T10:00:00Z',
      why: 'mx2.example.com: 250 2.1.5 OK',
    };
    expect(await allOf(job)).toEqual([NEW_EVIDENCE[0], [2, latest], ...NEW_EVIDENCE.slice(2)]);
    expect([...(await readEvidence(job, [2, 3]))]).toEqual([[2, latest], NEW_EVIDENCE[2]]);
    // Without version 3, version 2's.
    expect((await readEvidence({ path: first, rechecks: [v2] }, [2])).get(2)).toMatchObject({
      reply: '550 5.1.1 Gone',
      checkedAt: '2026-11-20T10:00:00Z',
    });

    // A job whose first run was offline kept no evidence: its re-checked rows are found in its results.
    const results = write(
      'results.csv',
      'email,name,Validation Status\nann@example.com,Ann,unknown\nbob@example.com,Bob,valid\n',
    );
    const offlineJob: JobEvidence = {
      path: join(dir.path, 'missing.csv.gz'),
      rechecks: [v3, v2],
      results: { path: results, name: 'results.csv', delimiter: ',', emailIndex: 0 },
    };
    expect(await allOf(offlineJob)).toEqual([[2, latest]]);
    expect(await allOf({ path: join(dir.path, 'missing.csv.gz'), rechecks: [] })).toEqual([]);
  });

  it('keeps a 20,000-row list’s evidence in blocks, and reads a page of whys from its blocks alone', async () => {
    const plainPath = join(dir.path, 'big.csv');
    const chunks: Buffer[] = [];
    for (const chunk of syntheticExplain(20_000)) chunks.push(chunk);
    writeFileSync(plainPath, Buffer.concat(chunks));
    const keptPath = join(dir.path, 'big.csv.gz');
    const kept = await writeSyntheticEvidence(keptPath, 20_000);
    // The CSV is the same every time (a fixed seed and start time): its size is known.
    expect(kept.csvBytes).toBe(statSync(plainPath).size);
    expect(kept.keptBytes).toBe(statSync(keptPath).size);
    expect(kept.csvBytes / 20_000).toBeGreaterThan(150);
    // Kept: well under the ~100 bytes a row the issue allows.
    expect(kept.keptBytes / 20_000).toBeLessThan(50);
    const fd = openSync(keptPath, 'r');
    const blocks = readBlocks(fd, statSync(keptPath).size)!;
    closeSync(fd);
    // The header's block, then blocks of ~256 KiB of text each: rows 1–20,000 in order, none missed.
    expect(blocks.firsts[0]).toBe(0);
    expect(blocks.firsts.length).toBe(1 + Math.ceil(kept.csvBytes / (256 * 1024)));
    expect(blocks.firsts[1]).toBe(1);
    expect(blocks.lasts[blocks.lasts.length - 1]).toBe(20_000);
    for (let i = 2; i < blocks.firsts.length; i++) expect(blocks.firsts[i]).toBe(blocks.lasts[i - 1] + 1);
    const rows = [20_000, 1, 7_777, 12_345, 20_001, 2];
    expect(readWhys(keptPath, await indexExplain(keptPath), rows)).toEqual(
      readWhys(plainPath, await indexExplain(plainPath), rows),
    );
    expect((await allOf(keptPath)).length).toBe(20_000);
  });

  it('says in words when a kept file is damaged or not one the app keeps', async () => {
    const kept = readFileSync(await keep('whole.csv.gz', NEW_CSV));
    const cut = write('cut.csv.gz', kept.subarray(0, kept.length - 20));
    await expect(allOf(cut)).rejects.toThrow(/^The evidence file .*cut\.csv\.gz is damaged: /);
    const foreign = write('foreign.csv.gz', gzipSync(NEW_CSV));
    await expect(indexExplain(foreign)).rejects.toThrow(/foreign\.csv\.gz is not one this app keeps/);
  });
});
