// The one browser discovery of `npm start` and the end-to-end tests (electron/web/findBrowser.ts), and the
// e2e run without a browser: one line naming the install command, and a non-zero exit.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findBrowser, noBrowserMessage } from '../../../electron/web/findBrowser.js';
import { tempDir } from '../../helpers/service.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = tempDir();
afterAll(() => dir.remove());

function executable(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, 0o755);
  return path;
}

describe('findBrowser', () => {
  it('takes MAILSIEVE_BROWSER when set, and only it', () => {
    const mine = executable(join(dir.path, 'mine', 'my-chrome'));
    expect(findBrowser({ MAILSIEVE_BROWSER: mine, PATH: '' }, 'linux')).toBe(mine);
    expect(findBrowser({ MAILSIEVE_BROWSER: join(dir.path, 'missing'), PATH: '' }, 'linux')).toBeUndefined();
  });

  it('looks on PATH for chromium, chrome and google-chrome, in that order of names', () => {
    const bin = join(dir.path, 'bin');
    const chrome = executable(join(bin, 'google-chrome'));
    expect(findBrowser({ PATH: bin, HOME: dir.path }, 'darwin')).toBe(chrome);
    const chromium = executable(join(bin, 'chromium'));
    expect(findBrowser({ PATH: `${join(dir.path, 'empty')}:${bin}`, HOME: dir.path }, 'darwin')).toBe(
      chromium,
    );
  });

  it('looks in the usual macOS and Windows install folders', () => {
    const home = join(dir.path, 'home');
    const app = executable(join(home, 'Applications', 'Chromium.app', 'Contents', 'MacOS', 'Chromium'));
    expect(findBrowser({ PATH: '', HOME: home }, 'darwin')).toBe(app);
    const local = join(dir.path, 'LocalAppData');
    const exe = executable(join(local, 'Google', 'Chrome', 'Application', 'chrome.exe'));
    expect(findBrowser({ PATH: '', LOCALAPPDATA: local }, 'win32')).toBe(exe);
  });

  it('finds nothing where there is nothing, and says how to install one', () => {
    expect(
      findBrowser({ PATH: join(dir.path, 'empty'), HOME: join(dir.path, 'nobody') }, 'darwin'),
    ).toBeUndefined();
    expect(noBrowserMessage({}, 'linux')).toMatch(/apt-get install chromium/);
    expect(noBrowserMessage({}, 'darwin')).toMatch(/brew install --cask chromium/);
    expect(noBrowserMessage({ MAILSIEVE_BROWSER: '/x/chrome' }, 'linux')).toMatch(
      /MAILSIEVE_BROWSER is \/x\/chrome/,
    );
  });
});

describe('the end-to-end run without a browser', () => {
  it('stops with one line and a non-zero exit', () => {
    const result = spawnSync(
      process.execPath,
      [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'e2e'],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, MAILSIEVE_BROWSER: join(dir.path, 'no-such-browser'), NO_COLOR: '1' },
        timeout: 60_000,
      },
    );
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '' && !/npm warn/.test(line));
    expect(lines).toEqual([
      expect.stringMatching(/^End-to-end tests cannot run\. MAILSIEVE_BROWSER is .*no-such-browser/),
    ]);
    expect(result.stdout).not.toMatch(/\n\s+at /);
  });
});
