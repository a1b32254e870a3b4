// The CLI and the desktop core run lists on the one job engine and exporter: the same lists (CSV, TXT, ZIP, and
// a report-only list then bought) through `mailsieve clean` / `mailsieve purchase` (the built CLI, a real child
// process) and through the desktop core give byte-identical results files and exports. Both go through a
// recording proxy in front of one service: E9 is sent only to buy the report-only list, once by each.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDetail } from '../../../shared/desktop/contract.js';
import { EXPORT_KINDS } from '../../../shared/exports.js';
import { createDesktopCore, type DesktopCore } from '../../../electron/core/desktop.js';
import { FileSecretStore } from '../../../electron/core/secrets.js';
import { demoPeople, loadDemo } from '../../../service/identity/demo.js';
import { runCli } from '../../helpers/cli.js';
import { startRecordingProxy, type RecordingProxy } from '../../helpers/recordingProxy.js';
import { startTestService, tempDir, type TestService } from '../../helpers/service.js';

const E9 = /^\/v5\/list\/\d+\/purchase\/?$/;

async function value<T>(reply: Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>) {
  const answer = await reply;
  if (!answer.ok) throw new Error(answer.error?.message);
  return answer.value as T;
}

async function settled(core: DesktopCore, jobId: number): Promise<JobDetail> {
  for (;;) {
    const job = await value<JobDetail>(core.handle('jobs:get', { jobId }));
    if (!['queued', 'uploading', 'processing', 'downloading'].includes(job.status)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A results file's text: the file's, or the one inside a zip. */
function resultsText(path: string): string {
  if (!path.endsWith('.zip')) return readFileSync(path, 'utf8');
  const entries = Object.values(unzipSync(readFileSync(path)));
  expect(entries).toHaveLength(1);
  return Buffer.from(entries[0]).toString('utf8');
}

interface Case {
  readonly file: string;
  readonly content: string | Uint8Array;
  readonly delimiter: string;
  readonly roles: readonly string[];
  readonly services?: readonly string[];
  /** Report-only, then bought with these fields (and Individual email matches only). */
  readonly buy?: readonly string[];
}

describe('the CLI and the desktop give the same results and exports', () => {
  let service: TestService;
  let proxy: RecordingProxy;
  let key: string;
  let dir: ReturnType<typeof tempDir>;
  const leads: string[] = [];
  beforeAll(async () => {
    service = await startTestService();
    key = service.key({
      services: ['validation', 'corrections', 'intelligence', 'email_append'],
      rateLimit: 0,
    });
    await loadDemo(service.db, { people: 40, seed: 3 });
    for (const { person } of demoPeople({ people: 40, seed: 3 }))
      if (person[1]) leads.push([person[1], person[4], person[5], person[6], person[9]].join(','));
    proxy = await startRecordingProxy(service.url);
    dir = tempDir('mailsieve-parity-');
  });
  afterAll(async () => {
    await proxy.close();
    await service.close();
    dir.remove();
  });

  const LIST = [
    'email,name',
    'jane@example.com,Jane',
    'bad-address,"Bad, Address"',
    'john@gmial.com,"John ""Jo"" Doe"',
    'jane@example.com,Jane again',
    'info@example.org,Info',
    '',
  ].join('\n');
  const cases = (): Case[] => [
    { file: 'list.csv', content: LIST, delimiter: ',', roles: ['email', 'ignore'] },
    {
      file: 'list.txt',
      content: LIST.replaceAll(',', '\t').replace('"Bad\t Address"', 'Bad Address'),
      delimiter: '\t',
      roles: ['email', 'ignore'],
    },
    {
      file: 'list.zip',
      content: zipSync({ 'list.csv': strToU8(LIST) }),
      delimiter: ',',
      roles: ['email', 'ignore'],
    },
    {
      file: 'leads.csv',
      content: `email,first name,last name,street,zip\n${leads.join('\n')}\nnobody@example.com,No,Body,1 Nowhere Rd,99999\n`,
      delimiter: ',',
      roles: ['email', 'first_name', 'last_name', 'street', 'zip'],
      services: ['email_validation', 'email_intelligence', 'email_append'],
      buy: ['age', 'email_append'],
    },
  ];

  it('for CSV, TXT, ZIP and a report-only list bought', { timeout: 240_000 }, async () => {
    for (const item of cases()) {
      const where = join(dir.path, item.file.replace('.', '-'));
      const cliOut = join(where, 'cli');
      mkdirSync(cliOut, { recursive: true });
      const input = join(where, item.file);
      writeFileSync(input, item.content);
      const env = { MAILSIEVE_API_KEY: key, MAILSIEVE_HOME: join(where, 'home') };
      const exportArgs = EXPORT_KINDS.flatMap((kind) => ['--export', kind]);

      // The CLI.
      proxy.requests.length = 0;
      const remote = ['--base-url', proxy.url, '--out', cliOut];
      let cliResults: string;
      if (item.buy) {
        const services = 'validation,intelligence,email_append';
        const report = await runCli(
          ['clean', input, ...remote, '--services', services, '--report-only'],
          env,
        );
        expect(report.code, report.stderr).toBe(0);
        expect(proxy.count('POST', E9)).toBe(0);
        const listId = /mailsieve purchase (\d+)/.exec(report.stdout)![1];
        const bought = await runCli(
          ['purchase', listId, ...remote, '--fields', item.buy.join(','), '--match-type', 'I', ...exportArgs],
          env,
        );
        expect(bought.code, bought.stderr).toBe(0);
        cliResults = /Results: (\S+)/.exec(bought.stdout)![1];
        expect(proxy.count('POST', E9)).toBe(1);
      } else {
        const cleaned = await runCli(['clean', input, ...remote, ...exportArgs], env);
        expect(cleaned.code, cleaned.stderr).toBe(0);
        cliResults = /Results: (\S+)/.exec(cleaned.stdout)![1];
        expect(proxy.count('POST', E9)).toBe(0);
      }
      const stem = item.file.replace(/\.\w+$/, '');
      expect(cliResults).toMatch(new RegExp(`/${stem}-\\d+-Validation\\.${item.file.split('.')[1]}$`));

      // The desktop core.
      proxy.requests.length = 0;
      const home = join(where, 'desktop');
      const core = createDesktopCore({
        home,
        secrets: new FileSecretStore(home),
        mode: 'browser',
        hasNativeDialogs: false,
        version: 'test',
        startEmbedded: () =>
          Promise.resolve({ baseUrl: proxy.url, apiKey: key, close: () => Promise.resolve() }),
        localPollIntervalMs: 50,
      });
      try {
        const staged = await value<{ fileId: string }>(core.handle('files:add-path', { path: input }));
        const started = await value<{ jobIds: number[] }>(
          core.handle('jobs:start', {
            fileId: staged.fileId,
            mapping: { delimiter: item.delimiter, header: true, roles: item.roles },
            options: {
              reportOnly: item.buy !== undefined,
              split: false,
              ...(item.services ? { services: item.services } : {}),
            },
          }),
        );
        const jobId = started.jobIds[0];
        let job = await settled(core, jobId);
        if (item.buy) {
          expect(job.status).toBe('awaiting-purchase');
          expect(proxy.count('POST', E9)).toBe(0);
          await value(core.handle('jobs:purchase', { jobId, fields: [...item.buy], matchType: 'I' }));
          job = await settled(core, jobId);
        }
        expect(job.status, job.timeline.at(-1)?.message ?? '').toBe('completed');
        expect(proxy.count('POST', E9)).toBe(item.buy ? 1 : 0);
        const jobDir = join(home, 'results', String(jobId));
        const desktopResults = readdirSync(jobDir).find((name) => name.startsWith(`${stem}-`))!;
        expect(desktopResults).toMatch(new RegExp(`^${stem}-\\d+-Validation\\.${item.file.split('.')[1]}$`));
        // Byte-identical results (a zip's text: the archive carries its own time stamps).
        expect(resultsText(join(jobDir, desktopResults)), item.file).toBe(resultsText(cliResults));
        const textExtension = item.file.endsWith('.txt') ? '.txt' : '.csv';
        for (const kind of EXPORT_KINDS) {
          const info = await value<{ id: number; rows: number }>(core.handle('jobs:export', { jobId, kind }));
          const file = core.exportFile(info.id)!;
          // One naming rule: the list's stem and the kind, on disk and as offered for saving.
          const name = `${stem}-${kind}${textExtension}`;
          expect([file.fileName, basename(file.path)]).toEqual([name, name]);
          const desktopExport = readFileSync(file.path, 'utf8');
          const cliExport = readFileSync(join(cliOut, name), 'utf8');
          expect(desktopExport, `${item.file} ${kind}`).toBe(cliExport);
        }
        // Both rows of jane@example.com are flagged.
        expect(job.duplicates).toBe(item.buy ? 0 : 2);
      } finally {
        await core.close();
      }
    }
  });
});
