#!/usr/bin/env node
// The CLI, bundled into dist/cli/mailsieve.cjs by `npm run build` (which `npm ci` runs through `prepare`) from
// the compiled code in dist/ (dist/electron/cli/main.js, which runs the same when started directly), and run
// with the V8 code caches the build made for it (service/bundleLoader.ts).
import { fileURLToPath } from 'node:url';
import { runBundle } from '../dist/service/bundleLoader.js';

runBundle(fileURLToPath(new URL('../dist/cli/mailsieve.cjs', import.meta.url)));
