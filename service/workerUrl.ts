// Where a worker thread's script is, for every worker of the service and of the desktop core (the list
// pipeline's, the identity room's bulk and prepare workers, the log writer, the export and pre-check workers):
// its bundle in dist/workers/, else the compiled file beside the module that starts it.
import { existsSync } from 'node:fs';

/** The checkout's root: this module is <root>/service/workerUrl.{ts,js} or <root>/dist/service/…. */
const ROOT = new URL('../', import.meta.url);
/** The build's folder. */
const DIST = ROOT.href.endsWith('/dist/') ? ROOT : new URL('dist/', ROOT);
/** The workers build/build.js also bundles (dist/workers/<name>.js): the ones of a list's run. */
const BUNDLED: ReadonlySet<string> = new Set(['pipelineWorker', 'verifyWorker', 'exportWorker']);

/**
 * The URL of the worker script `name` beside the module at `moduleUrl` (its `import.meta.url`), as
 * JavaScript; for the workers of a list's run, their bundle in dist/workers/ when the build made one (it
 * starts faster). Worker threads run JavaScript only: from the build (dist/) the script is the file beside the
 * module; when the module runs as TypeScript source (Vitest runs sources), the script is taken from the build
 * instead — `npm test` builds dist/ before it runs Vitest — at the same path under <root>/dist/.
 */
export function workerScriptUrl(moduleUrl: string, name: string): URL {
  const base = name.slice(name.lastIndexOf('/') + 1);
  if (BUNDLED.has(base)) {
    const bundled = new URL(`workers/${base}.js`, DIST);
    if (existsSync(bundled)) return bundled;
  }
  const beside = new URL(`./${name}.js`, moduleUrl);
  if (moduleUrl.endsWith('.js') || !beside.href.startsWith(ROOT.href)) return beside;
  return new URL(`dist/${beside.href.slice(ROOT.href.length)}`, ROOT);
}

/**
 * The old-generation limit of a list worker, MiB. A worker holds the engine's lists and caches (tens of MiB)
 * and streams rows by the million; without a limit V8 lets garbage pile up to hundreds of MiB before a full
 * collection, which is what the 1,000,000-row benchmark's peak memory measured. The row tables are typed
 * arrays, outside this heap.
 */
export const WORKER_OLD_GENERATION_MB = 160;
