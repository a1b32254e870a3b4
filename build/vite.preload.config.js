// The Electron preload as one self-contained CommonJS script: a sandboxed preload can require nothing but
// 'electron' (and a few built-ins), so the contract's method table is bundled in.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: join(root, 'dist', 'electron', 'main'),
    emptyOutDir: false,
    target: 'node20',
    minify: false,
    sourcemap: false,
    reportCompressedSize: false,
    lib: {
      entry: join(root, 'electron', 'main', 'preload.ts'),
      formats: ['cjs'],
      fileName: () => 'preload.cjs',
    },
    rollupOptions: { external: ['electron'] },
  },
});
