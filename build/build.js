#!/usr/bin/env node
// Builds what runs from dist/: the Node project (electron/, service/, shared/, test/bench) compiled by tsc,
// the data files the engine reads at run time, a type check of the web project (renderer/ + shared/), the
// renderer bundled by Vite into dist/renderer, and the Electron preload bundled into one CommonJS script.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

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
