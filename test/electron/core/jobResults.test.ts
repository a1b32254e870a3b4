// The Results numbers kept with the job (history DB, migration 0060): counted once from the results file,
// read back without reading the file again, and counted again for a new version of the results (a re-check
// writes another file). Pages of a drill-down name each row's why, or what an offline job checked.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setJobChecks } from '../../../electron/core/history/jobVersions.js';
import { jobCountsOf } from '../../../electron/core/history/counts.js';
import {
  getJob,
  insertJob,
  openHistoryDb,
  setJobResults,
  type HistoryDb,
} from '../../../electron/core/history/db.js';
import { jobResultsReader } from '../../../electron/core/results/jobView.js';
import { tempDir } from '../../helpers/service.js';

const HEADER = 'Email,Name,Validation Status,Validation Code,Domain Type,Role Account,Duplicate,Valid Email';

describe('a job’s Results numbers and rows', () => {
  let dir: ReturnType<typeof tempDir>;
  let db: HistoryDb;
  beforeEach(() => {
    dir = tempDir();
    db = openHistoryDb(join(dir.path, 'history.sqlite'));
  });
  afterEach(() => {
    db.close();
    dir.remove();
  });

  it('counts once, keeps the counts per results file, and counts a new version again', async () => {
    const id = insertJob(db, {
      fileName: 'list.csv',
      filePath: join(dir.path, 'list.csv'),
      uploadName: 'list.csv',
      uploadHeader: true,
      fileSize: 10,
      fileSha256: null,
      fileFormat: 'csv',
      fileEncoding: 'utf-8',
      mapping: { delimiter: ',', header: true, roles: ['email', 'first_name'] },
      options: { reportOnly: false, split: false, services: ['email_validation'] },
      connectionKind: 'embedded',
      connectionUrl: null,
    });
    setJobChecks(db, id, { level: 'offline', reason: 'chosen' });
    const first = join(dir.path, 'results-1.csv');
    writeFileSync(
      first,
      [
        HEADER,
        'a@example.com,A,unknown,10,biz,false,true,',
        'A@example.com,A,unknown,10,biz,false,true,',
        'b@gmial.com,B,corrected,310,freeisp,false,false,b@gmail.com',
        'c@@example.com,C,invalid,300,,false,false,',
      ].join('\n') + '\n',
    );
    setJobResults(db, id, { path: first, name: 'results-1.csv', duplicates: 2 });
    const reader = jobResultsReader(db, dir.path);
    const job = getJob(db, id)!;
    const counts = await reader.counts(job, { path: first, name: 'results-1.csv' });
    expect(counts).toMatchObject({
      rows: 4,
      exportKind: 'clean',
      ready: 2,
      duplicatesLeftOut: 1,
      invalid: 1,
    });
    expect(jobCountsOf(db, id, first)).toEqual(counts);
    // Read back from the history, not the file (gone now).
    rmSync(first);
    expect(await jobResultsReader(db, dir.path).counts(job, { path: first, name: 'results-1.csv' })).toEqual(
      counts,
    );
    // A new version of the results is counted again.
    const second = join(dir.path, 'results-2.csv');
    writeFileSync(second, [HEADER, 'a@example.com,A,valid,50,biz,false,false,'].join('\n') + '\n');
    expect(jobCountsOf(db, id, second)).toBeUndefined();
    const again = await reader.counts(job, { path: second, name: 'results-2.csv' });
    expect(again).toMatchObject({ rows: 1, ready: 1, statuses: { valid: 1 } });
    expect(jobCountsOf(db, id, second)).toEqual(again);

    // A page of a drill-down: the rows, where their columns are, and what an offline job checked.
    const page = await reader.page(job, { path: second, name: 'results-2.csv' }, { status: 'valid' }, 0, 10);
    expect(page).toMatchObject({
      total: 1,
      numbers: [1],
      hasMore: false,
      layout: { email: 0, status: 2, code: 3, domainType: 4, validEmail: 7 },
      whys: null,
      whyNote: 'Checked offline: syntax only (the code says why).',
    });
    // With the list's explain file saved beside the results, each row's why.
    setJobChecks(db, id, { level: 'dns', reason: 'chosen' });
    mkdirSync(join(dir.path, String(id)), { recursive: true });
    writeFileSync(
      join(dir.path, String(id), 'explain.csv'),
      'Row,Email,Status Code,Checked,Why\n1,a@example.com,50,dns,"DNS: example.com has MX mx1.example.com"\n',
      { flag: 'w' },
    );
    const withWhy = await reader.page(job, { path: second, name: 'results-2.csv' }, {}, 0, 10);
    expect(withWhy.whys).toEqual(['DNS: example.com has MX mx1.example.com']);
  });
});
