// The desktop path of `npm run bench -- list`, as a process of its own: the list added to the desktop core
// (electron/core/desktop.ts, as browser mode and Electron run it, on the embedded service in `home`), its
// mapping as inspected, the job run to its results, then one export (clean) — what a user does in the app, with
// the app's own settings (its embedded service polled as often as `mailsieve clean` polls it). The core is
// the bundle the app loads (dist/desktop/core.js, made by build/build.js with main.js and web.js), so the
// figure includes the app's start-up as it is, not that of the 150 compiled modules under dist/electron/.
// Usage: node listDesktop.js LIST HOME
import type * as Core from '../../electron/core/desktop.js';
import type { Inspection, JobDetail } from '../../shared/desktop/contract.js';

const [path, home] = process.argv.slice(2);
if (!path || !home) throw new Error('usage: listDesktop.js LIST HOME');
// This file runs as dist/test/bench/listDesktop.js.
const { createDesktopCore, FileSecretStore } = (await import(
  new URL('../../desktop/core.js', import.meta.url).href
)) as typeof Core;

async function value<T>(reply: Promise<{ ok: boolean; value?: unknown; error?: { message: string } }>) {
  const answer = await reply;
  if (!answer.ok) throw new Error(answer.error?.message);
  return answer.value as T;
}

const core = createDesktopCore({
  home,
  secrets: new FileSecretStore(home),
  mode: 'browser',
  hasNativeDialogs: false,
  version: 'bench',
});
try {
  const { fileId } = await value<{ fileId: string }>(core.handle('files:add-path', { path }));
  const inspection = await value<Inspection>(core.handle('files:inspect', { fileId }));
  const started = await value<{ jobIds: number[] }>(
    core.handle('jobs:start', {
      fileId,
      mapping: {
        delimiter: inspection.delimiter,
        header: inspection.header,
        roles: inspection.columns.map((column) => column.suggestedRole),
      },
      options: { reportOnly: false, split: false },
    }),
  );
  const jobId = started.jobIds[0];
  let stop = () => {};
  const done = await new Promise<JobDetail>((resolve, reject) => {
    const check = () =>
      void value<JobDetail>(core.handle('jobs:get', { jobId })).then((job) => {
        if (['completed', 'failed', 'cancelled'].includes(job.status)) resolve(job);
      }, reject);
    stop = core.on((event) => {
      if (event === 'jobs:changed') check();
    });
    check();
  });
  stop();
  if (done.status !== 'completed') throw new Error(`the job ended ${done.status}`);
  const exported = await value<{ rows: number }>(core.handle('jobs:export', { jobId, kind: 'clean' }));
  process.stdout.write(`${done.rows} rows, ${exported.rows} exported\n`);
} finally {
  await core.close();
}
