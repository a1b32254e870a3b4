// The closing line of test/summaryReporter.ts agrees with vitest's exit code: a real vitest run, in a
// temporary folder, on tiny test files whose hooks fail.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const reporter = join(root, 'test', 'summaryReporter.ts');
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Runs vitest (globals on: the files import nothing) on `files`; the exit code and the closing line. */
function runVitest(files: Record<string, string>): { code: number | null; line: string | undefined } {
  const folder = mkdtempSync(join(tmpdir(), 'mailsieve-reporter-'));
  folders.push(folder);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
  const result = spawnSync(
    process.execPath,
    [vitest, 'run', '--root', folder, '--globals', '--pool', 'threads', '--reporter', reporter],
    { cwd: folder, encoding: 'utf8', env: { ...process.env, CI: '1', NO_COLOR: '1' }, timeout: 60_000 },
  );
  const line = result.stdout.split('\n').find((l) => l.startsWith('tests: '));
  return { code: result.status, line };
}

describe('the summary line', () => {
  it('counts a beforeAll that throws as a failure, as the exit code does', () => {
    const { code, line } = runVitest({
      'ok.test.js': "test('passes', () => {});\n",
      'hook.test.js':
        "beforeAll(() => { throw new Error('no browser'); });\ntest('a', () => {});\ntest('b', () => {});\n",
    });
    expect(code).toBe(1);
    expect(line).toBe('tests: 1 passed, 1 failed, 2 skipped');
  });

  it('counts an afterAll that throws, a file that fails to load, and failed tests', () => {
    const { code, line } = runVitest({
      'after.test.js': "afterAll(() => { throw new Error('cleanup'); });\ntest('a', () => {});\n",
      'load.test.js': "throw new Error('cannot load');\n",
      'nested.test.js':
        "describe('x', () => { beforeAll(() => { throw new Error('x'); }); test('c', () => {}); });\ntest('d', () => { throw new Error('d'); });\n",
    });
    expect(code).toBe(1);
    expect(line).toBe('tests: 1 passed, 4 failed, 1 skipped');
  });

  it('reads 0 failed when everything passes, with exit code 0', () => {
    const { code, line } = runVitest({ 'ok.test.js': "test('a', () => {});\ntest.skip('b', () => {});\n" });
    expect(code).toBe(0);
    expect(line).toBe('tests: 1 passed, 0 failed, 1 skipped');
  });
});
