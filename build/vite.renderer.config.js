// Vite config of the renderer (renderer/ + shared/): a static build into dist/renderer, served by the Electron
// shell from disk and by browser mode's web host. No inline scripts, so the strict CSP holds.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root: join(root, 'renderer'),
  base: './',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: join(root, 'dist', 'renderer'),
    emptyOutDir: true,
    target: 'chrome120',
    sourcemap: true,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
    // One script and one stylesheet: the app is small and loads from disk or loopback.
    assetsInlineLimit: 0,
  },
});
