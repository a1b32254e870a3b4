/**
 * The URL of one of this folder's worker scripts, as JavaScript. Worker threads run JavaScript only: from the
 * build (dist/service/lists/) the script is the file beside this module; when this module runs as TypeScript
 * source (Vitest runs sources), the script is taken from the build instead — `npm test` builds dist/ before it
 * runs Vitest — at <root>/dist/service/lists/<name>.js.
 */
export function workerUrl(name: string): URL {
  const here = import.meta.url;
  if (here.endsWith('.js')) return new URL(`./${name}.js`, here);
  return new URL(`../../dist/service/lists/${name}.js`, here);
}

/**
 * The old-generation limit of a list worker, MiB. A worker holds the engine's lists and caches (tens of MiB)
 * and streams rows by the million; without a limit V8 lets garbage pile up to hundreds of MiB before a full
 * collection, which is what the 1,000,000-row benchmark's peak memory measured. The row tables are typed
 * arrays, outside this heap.
 */
export const WORKER_OLD_GENERATION_MB = 160;
