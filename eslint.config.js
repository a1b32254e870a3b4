// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';
import reactHooks from 'eslint-plugin-react-hooks';

// The layering of DESIGN.md: renderer → shared; electron → shared, service; service → shared. Inside
// service/lists/, one room per place its code runs (docs/architecture.md).
// Nothing imports renderer. shared/ is pure TypeScript: no node:*, no DOM-only or Electron imports.
const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const layer = (
  /** @type {string[]} */ forbiddenFolders,
  /** @type {string[]} */ extraPaths = [],
  /** @type {{ group?: string[], regex?: string, message: string }[]} */ extraPatterns = [],
) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: extraPaths.map((name) => ({ name, message: 'Not allowed in this layer (see DESIGN.md).' })),
      patterns: [
        ...forbiddenFolders.map((folder) => ({
          group: [`**/${folder}/**`, `**/${folder}`],
          message: `This layer may not import from ${folder}/ (see DESIGN.md, "Allowed imports").`,
        })),
        ...extraPatterns,
      ],
    },
  ],
});

// The rooms of service/lists/, by where their code runs (docs/architecture.md, "The list pipeline"). A rule of
// a room replaces the service's (ESLint keeps the last), so each repeats it: no renderer/, no electron/.
// The domain rooms of the service (identity, engine, lists, store, pg) stand below its HTTP layer: they
// answer the routes, never the other way round, so none imports service/http/ (what both need, such as the
// error a request's work throws, is below them: service/requestError.ts).
const BELOW_HTTP = {
  group: ['**/http/**', '**/http'],
  message:
    'A domain room of the service may not import from service/http/: the HTTP layer uses the rooms, not the other way round (see docs/architecture.md).',
};

const room = (
  /** @type {string} */ name,
  /** @type {string[]} */ forbidden,
  /** @type {{ group?: string[], regex?: string, message: string }[]} */ extraPatterns = [],
) =>
  layer(
    ['renderer', 'electron'],
    ['electron'],
    [
      BELOW_HTTP,
      ...forbidden.map((other) => ({
        group: [`**/${other}/**`],
        message: `${name} may not import from ${other}/ (see docs/architecture.md, "The list pipeline").`,
      })),
      ...extraPatterns,
    ],
  );

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
  {
    files: ['service/{identity,engine,lists,store,pg}/**/*.ts'],
    rules: layer(['renderer', 'electron'], ['electron'], [BELOW_HTTP]),
  },
  // What every room of service/lists/ shares (types.ts, parts.ts, rowFlags.ts, report.ts, verdicts.ts, names.ts)
  // stands below the rooms: it may use the reading of files (read/), nothing else of them.
  {
    files: ['service/lists/*.ts'],
    rules: room('Code every room shares', ['node', 'pipeline', 'verify', 'backend']),
  },
  // The types both threads and both backends share import nothing of service/lists/ (no circle can form).
  {
    files: ['service/lists/types.ts'],
    rules: room('types.ts', [], [{ regex: '^\\./', message: 'types.ts imports nothing of service/lists/.' }]),
  },
  // The reading of list files (also the desktop's and the CLI's): its own room and the shared types only.
  {
    files: ['service/lists/read/**/*.ts'],
    rules: room(
      'The reading of list files',
      ['node', 'pipeline', 'verify', 'backend', 'engine', 'identity', 'store', 'pg', 'http', 'ops'],
      [
        {
          regex: '^\\.\\./(?!types\\.js$)[^/]+$',
          message: 'The reading of list files may import, of service/lists/, only types.ts.',
        },
      ],
    ),
  },
  // The verify workers answer the pipeline worker: nothing of the node's side, the pipeline or the backends.
  {
    files: ['service/lists/verify/**/*.ts'],
    rules: room('A verify worker', ['node', 'pipeline', 'backend']),
  },
  // The pipeline worker thread talks to the node's side by messages (types.ts), and never keeps lists itself.
  {
    files: ['service/lists/pipeline/**/*.ts'],
    rules: room('The pipeline worker', ['node', 'backend', 'pg']),
  },
  // The node's side reaches the pipeline worker through its handle (node/pipelineThread.ts) and its messages,
  // not its entry or its plan; the verify workers are the pipeline worker's; the backends through the port.
  {
    files: ['service/lists/node/**/*.ts'],
    rules: room(
      "The node's side",
      ['verify', 'pg'],
      [
        {
          group: ['**/pipeline/pipelineWorker*', '**/pipeline/plan*', '**/backend/localBackend*'],
          message:
            "The node's side uses the pipeline worker through node/pipelineThread.ts and the backends through backend/port.ts (see docs/architecture.md).",
        },
      ],
    ),
  },
  // The port and the single node's adapter know nothing of who runs the jobs, nor how list files are read.
  {
    files: ['service/lists/backend/**/*.ts'],
    rules: room('The backends', ['node', 'pipeline', 'verify', 'read']),
  },
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
