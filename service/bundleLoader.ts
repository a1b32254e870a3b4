// Runs a bundle of the build (the CLI, dist/cli/mailsieve.cjs, which bin/mailsieve.js starts; the worker
// threads of a list's run, dist/workers/*.cjs, which their stubs beside them start) with the V8 code caches the
// build made for it: a `.cache` file beside each chunk that a clean loads. Node 20 has no compile cache of its
// own (module.enableCompileCache came in Node 22), and compiling the CLI's JavaScript was about a third of
// every command's start-up: `clean` started its service in ~0.18 s with the caches against ~0.29 s without
// (docs/lists.md), and each list worker is ready sooner.
//
// A cache is a file of the build's, read and never written at run time. It is used only for the chunk it was
// made from (the chunk's size and modification time are written at its head) and only if V8 accepts it (the
// same V8 and the same flags); otherwise the chunk compiles as it would have without one. The chunks are
// CommonJS: the loader gives each a `require` that loads the bundle's own chunks ("./chunk-….cjs") the same
// way, and anything else (Node's modules, better-sqlite3) as Node would.
//
// The build makes the caches by running a clean of a small list with MAKE_CACHE_VARIABLE set: every chunk the
// run loads, in every thread, then has its cache written (after the run, so that it holds every function the
// run compiled, not only its chunk's top level).
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { isMainThread, threadId } from 'node:worker_threads';

/** Set (to 1) by the build for the run that makes the caches. */
export const MAKE_CACHE_VARIABLE = 'MAILSIEVE_MAKE_CODE_CACHE';

/** The head of a cache file: its chunk's size and modification time (ms), as two 64-bit floats. */
const HEAD_BYTES = 16;

/**
 * How often a worker thread writes its caches while they are being made: a worker is stopped without an
 * `exit` event, so it writes them once loaded and then as it goes (the last hold what it compiled for the list).
 */
const WORKER_WRITE_MS = 50;

/** The code cache file of a chunk. */
export const cacheFileOf = (chunk: string): string => `${chunk}.cache`;

function stampOf(chunk: string): [size: number, mtimeMs: number] {
  const stats = statSync(chunk);
  return [stats.size, stats.mtimeMs];
}

/** The cache made for this very chunk, or undefined (none, or made for another). */
function cacheFor(chunk: string): Buffer | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(cacheFileOf(chunk));
  } catch {
    return undefined;
  }
  if (bytes.length <= HEAD_BYTES) return undefined;
  const [size, mtimeMs] = stampOf(chunk);
  if (bytes.readDoubleLE(0) !== size || bytes.readDoubleLE(8) !== mtimeMs) return undefined;
  return bytes.subarray(HEAD_BYTES);
}

type Wrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: Module,
  filename: string,
  dirname: string,
) => void;

/** What a bundle's run loaded: every chunk, and those compiled from their caches. */
export interface BundleReport {
  readonly loaded: string[];
  readonly fromCache: string[];
}

class BundleLoader {
  readonly report: BundleReport = { loaded: [], fromCache: [] };
  private readonly modules = new Map<string, Module>();
  /** When making caches: every chunk compiled, to write its cache. */
  private readonly compiled: { readonly chunk: string; readonly script: vm.Script }[] = [];

  constructor(
    private readonly folder: string,
    private readonly makeCache: boolean,
  ) {
    if (!makeCache) return;
    process.once('exit', () => this.writeCaches());
    if (!isMainThread) setInterval(() => this.writeCaches(), WORKER_WRITE_MS).unref();
  }

  load(chunk: string): unknown {
    const known = this.modules.get(chunk);
    if (known) return known.exports;
    const module = new Module(chunk);
    module.filename = chunk;
    this.modules.set(chunk, module);
    const cachedData = this.makeCache ? undefined : cacheFor(chunk);
    const script = new vm.Script(Module.wrap(readFileSync(chunk, 'utf8')), {
      filename: chunk,
      ...(cachedData ? { cachedData } : {}),
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    this.report.loaded.push(chunk);
    if (cachedData && !script.cachedDataRejected) this.report.fromCache.push(chunk);
    if (this.makeCache) this.compiled.push({ chunk, script });
    const nodeRequire = createRequire(chunk);
    const require = Object.assign(
      (id: string): unknown =>
        id.startsWith('./chunk-') && id.endsWith('.cjs') ? this.load(join(this.folder, id)) : nodeRequire(id),
      {
        resolve: nodeRequire.resolve,
        cache: nodeRequire.cache,
        extensions: nodeRequire.extensions,
        main: undefined,
      },
    );
    const run = script.runInThisContext() as Wrapper;
    run.call(module.exports, module.exports, require, module, chunk, this.folder);
    module.loaded = true;
    return module.exports;
  }

  /** Each written whole under a name of this thread's, then renamed: threads that share a chunk write it too. */
  writeCaches(): void {
    for (const { chunk, script } of this.compiled) {
      const [size, mtimeMs] = stampOf(chunk);
      const head = Buffer.alloc(HEAD_BYTES);
      head.writeDoubleLE(size, 0);
      head.writeDoubleLE(mtimeMs, 8);
      const file = cacheFileOf(chunk);
      const partial = `${file}.${process.pid}-${threadId}`;
      writeFileSync(partial, Buffer.concat([head, script.createCachedData()]));
      renameSync(partial, file);
    }
  }
}

/**
 * Runs the CommonJS bundle whose entry is `entry` as Node would run it as a program (or a worker's script),
 * each chunk compiled from its code cache when there is a fitting one; with MAKE_CACHE_VARIABLE set, the
 * caches of the chunks it loads are made instead. The report grows as the run loads more chunks.
 */
export function runBundle(entry: string): BundleReport {
  const makeCache = process.env[MAKE_CACHE_VARIABLE] === '1';
  const loader = new BundleLoader(dirname(entry), makeCache);
  loader.load(entry);
  if (makeCache && !isMainThread) loader.writeCaches();
  return loader.report;
}
