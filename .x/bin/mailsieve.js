#!/usr/bin/env node
// The CLI, bundled into dist/cli/ by `npm run build` (which `npm ci` runs through `prepare`) from the compiled
// code in dist/ (dist/electron/cli/main.js, which runs the same when started directly).
import '../dist/cli/mailsieve.js';
