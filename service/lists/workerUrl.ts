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
