// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';
import reactHooks from 'eslint-plugin-react-hooks';

// The layering of DESIGN.md: renderer → shared; electron → shared, service; service → shared.
// Nothing imports renderer. shared/ is pure TypeScript: no node:*, no DOM-only or Electron imports.
const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const layer = (/** @type {string[]} */ forbiddenFolders, /** @type {string[]} */ extraPaths = []) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: extraPaths.map((name) => ({ name, message: 'Not allowed in this layer (see DESIGN.md).' })),
      patterns: forbiddenFolders.map((folder) => ({
        group: [`**/${folder}/**`, `**/${folder}`],
        message: `This layer may not import from ${folder}/ (see DESIGN.md, "Allowed imports").`,
      })),
    },
  ],
});

export default tseslint.config(
  {
    ignores: [
      'vitest.config.ts',
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test/fixtures/**',
      'build/out/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.node.json', './tsconfig.web.json', './tsconfig.e2e.json'],
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: layer(['renderer', 'electron', 'service'], [...nodeBuiltins, 'electron']),
  },
  { files: ['service/**/*.ts'], rules: layer(['renderer', 'electron'], ['electron']) },
  { files: ['electron/**/*.ts'], rules: layer(['renderer']) },
  // Inside electron/, one folder per program (DESIGN.md): the core is free of Electron and of the programs
  // that use it; only the shell (main/) imports 'electron'; no program imports another's entry folder.
  { files: ['electron/core/**/*.ts'], rules: layer(['renderer', 'main', 'web', 'cli'], ['electron']) },
  { files: ['electron/web/**/*.ts'], rules: layer(['renderer', 'main', 'cli'], ['electron']) },
  { files: ['electron/cli/**/*.ts'], rules: layer(['renderer', 'main', 'web'], ['electron']) },
  { files: ['electron/main/**/*.ts'], rules: layer(['renderer', 'cli']) },
  { files: ['renderer/**/*.{ts,tsx}'], rules: layer(['electron', 'service'], [...nodeBuiltins, 'electron']) },
  // The renderer runs in a browser: DOM globals, not Node's; React's rules of hooks.
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
);
