#!/usr/bin/env node
// Builds what runs from dist/: the Node project (electron/, service/, shared/, test/bench) compiled by tsc,
// the data files the engine reads at run time (and the table of its domain lists), a type check of the web
// project (renderer/ + shared/), the renderer bundled by Vite into dist/renderer, the Electron preload bundled
// into one CommonJS script, and the command line bundled into dist/cli.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

function run(args) {
  const result = spawnSync(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run(['-p', 'tsconfig.node.json']);
run(['-p', 'tsconfig.web.json']);

// The renderer and the preload, by Vite (in-process: no extra Node start per bundle).
const { build } = await import('vite');
for (const config of ['vite.renderer.config.js', 'vite.preload.config.js'])
  await build({ configFile: join(root, 'build', config) });

// Copy every `data/` folder below service/ (word lists, domain lists) next to the compiled code.
function copyDataFolders(folder) {
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (!statSync(path).isDirectory()) continue;
    if (name === 'data') cpSync(path, join(root, 'dist', relative(root, path)), { recursive: true });
    else copyDataFolders(path);
  }
}
if (existsSync(join(root, 'service'))) copyDataFolders(join(root, 'service'));

// The engine's table of the domains its lists name (service/engine/domainTable.ts), made once here rather
// than by every thread that verifies (each would spend 8 MB of its heap and 0.1–0.2 s on it).
const domainType = join(root, 'dist', 'service', 'engine', 'domainType.js');
if (existsSync(domainType)) {
  const { buildOwnTypeTable, OWN_TYPES_FILE } = await import(pathToFileURL(domainType).href);
  writeFileSync(OWN_TYPES_FILE, buildOwnTypeTable().toBytes());
}

// The command line as one bundle (dist/cli/mailsieve.cjs and its chunks, which bin/mailsieve.js runs), and the
// worker threads of a list's run (the pipeline, verification, the results writer) as bundles in dist/workers/,
// by rolldown: Node starts the CLI in 0.2 s instead of 0.35 s (fewer files to find and load), and each worker sooner. They
// are the compiled code above, bundled: an `import.meta.url` keeps pointing at its module's own place in
// dist/, so data files are found where they were (service/workerUrl.ts takes a worker's bundle when
// there is one). Lazily imported modules (exceljs, undici) stay in chunks of their own.
const { rolldown } = await import('rolldown');
async function bundle(input, outDir, entryFileNames, external = [], format = 'esm') {
  rmSync(outDir, { recursive: true, force: true });
  const build = await rolldown({
    input,
    platform: 'node',
    // The native SQLite binding is found by its package at run time.
    external: [/^node:/, 'better-sqlite3', ...external],
    logLevel: 'warn',
    // The desktop core loads some modules when first needed (the zip writer, the workbook reader) that a CLI
    // command imports outright: in the CLI's bundle they are simply not split off, which is no fault.
    onLog(level, log, handler) {
      if (log.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') handler(level, log);
    },
    plugins: [
      {
        name: 'module-urls',
        transform(code, id) {
          if (!code.includes('import.meta.url')) return null;
          const own = relative(outDir, id).split(sep).join('/');
          return {
            code: code.replaceAll('import.meta.url', `new URL(${JSON.stringify(own)}, import.meta.url).href`),
            map: null,
          };
        },
      },
    ],
  });
  // Every file of a bundle in one folder, so that a module's place relative to it is the same from any chunk.
  await build.write({
    dir: outDir,
    format,
    entryFileNames,
    chunkFileNames: format === 'cjs' ? 'chunk-[hash].cjs' : 'chunk-[hash].js',
  });
  await build.close();
}
const dist = join(root, 'dist');
// The CLI and the list workers are CommonJS chunks, each with a V8 code cache beside it (made at the end of the
// build, below).
const cliBundle = join(dist, 'cli', 'mailsieve.cjs');
await bundle(join(dist, 'electron', 'cli', 'main.js'), join(dist, 'cli'), 'mailsieve.cjs', [], 'cjs');
const workers = {
  pipelineWorker: join(dist, 'service', 'lists', 'pipeline', 'pipelineWorker.js'),
  verifyWorker: join(dist, 'service', 'lists', 'verify', 'verifyWorker.js'),
  exportWorker: join(dist, 'electron', 'core', 'jobs', 'exportWorker.js'),
};
await bundle(workers, join(dist, 'workers'), '[name].cjs', [], 'cjs');
// Each worker's script (dist/workers/<name>.js, which service/workerUrl.ts gives) runs its bundle with its code
// caches, as bin/mailsieve.js runs the CLI's.
for (const name of Object.keys(workers))
  writeFileSync(
    join(dist, 'workers', `${name}.js`),
    `// The ${name} thread's script: its bundle (${name}.cjs), run with its code caches (service/bundleLoader.ts).
import { fileURLToPath } from 'node:url';
import { runBundle } from '../service/bundleLoader.js';

runBundle(fileURLToPath(new URL('./${name}.cjs', import.meta.url)));
`,
  );
// The desktop host the same way, in dist/desktop/: the Electron main (main.js, package.json's "main"; Electron
// itself stays outside), browser mode (web.js, which `npm start` and the end-to-end tests run) and the desktop
// core alone (core.js, which the desktop bench loads), sharing their chunks. Unbundled, Node spent 0.4–0.6 s
// finding and loading the core's 150 modules before the app could answer.
await bundle(
  {
    main: join(dist, 'electron', 'main', 'main.js'),
    web: join(dist, 'electron', 'web', 'main.js'),
    core: join(dist, 'electron', 'core', 'desktop.js'),
  },
  join(dist, 'desktop'),
  '[name].js',
  ['electron'],
);

// The code caches of the CLI and the list workers (service/bundleLoader.ts: Node 20 has no compile cache, and
// compiling the CLI was a third of every command's start-up). They are made by the CLI cleaning a small list
// offline, in a folder of its own: each thread writes the caches of the chunks it loaded, holding the
// functions the run compiled (a cache of the CLI's `--help` alone, the modules' loading, gave start-ups ~25 ms
// longer).
{
  const home = mkdtempSync(join(tmpdir(), 'mailsieve-build-'));
  try {
    // Enough rows for every worker to verify and write some (a few hundred kilobytes).
    const list = join(home, 'list.csv');
    const rows = ['email,first_name'];
    for (let i = 0; i < 5000; i++)
      rows.push(
        [
          `jane.doe${i}@example.com,Jane`,
          `john.smith${i}@gmail.com,John`,
          `info@company${i}.co.uk,`,
          `bad address${i}@example.com,`,
        ][i % 4],
      );
    writeFileSync(list, `${rows.join('\n')}\n`);
    const { MAKE_CACHE_VARIABLE } = await import(
      pathToFileURL(join(dist, 'service', 'bundleLoader.js')).href
    );
    const made = spawnSync(
      process.execPath,
      [
        join(root, 'bin', 'mailsieve.js'),
        'clean',
        list,
        '--out',
        home,
        '--data-dir',
        join(home, 'service'),
        '--checks',
        'offline',
      ],
      {
        cwd: root,
        env: { ...process.env, MAILSIEVE_HOME: home, [MAKE_CACHE_VARIABLE]: '1' },
        encoding: 'utf8',
      },
    );
    const missing = [
      cliBundle,
      ...Object.keys(workers).map((name) => join(dist, 'workers', `${name}.cjs`)),
    ].filter((entry) => !existsSync(`${entry}.cache`));
    if (made.status !== 0 || missing.length > 0) {
      console.error(made.stderr);
      console.error(
        `build: the code caches were not made (the clean that makes them ended with ${made.status}${missing.length > 0 ? `; none for ${missing.join(', ')}` : ''})`,
      );
      process.exitCode = 1;
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    // A worker stopped while it wrote a cache leaves the file it was writing (renamed only once whole).
    for (const folder of [join(dist, 'cli'), join(dist, 'workers')])
      for (const name of readdirSync(folder))
        if (/\.cache\..+$/.test(name)) rmSync(join(folder, name), { force: true });
  }
}
