// Starting the built app in browser mode (as `npm start` does where Electron is missing) and Chromium (found
// as `npm start` finds it) through playwright-core, for the end-to-end tests and the app benchmarks. Each run gets a fresh MAILSIEVE_HOME.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { findBrowser, noBrowserMessage } from '../../electron/web/findBrowser.js';

/** The repository: found upward from this file, which runs from test/ (tests) and dist/test/ (benchmarks). */
export const ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();
/** The browser the tests drive: found as `npm start` finds one (electron/web/findBrowser.ts), or undefined. */
export const CHROMIUM = findBrowser();
/** The flags this machine's Chromium needs (no sandbox as root, no background network). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface RunningApp {
  /** The app's origin (http://127.0.0.1:port). */
  readonly url: string;
  /**
   * A new launch address: single-use and valid for 60 s, so each browser context asks the app for its own
   * (a line on the app's standard input makes it print one).
   */
  launchUrl(): Promise<string>;
  readonly home: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** A fresh app home, removed by `remove()`. */
export function freshHome(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), 'mailsieve-e2e-'));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Starts the built app in browser mode on `home` and waits for the launch address it prints: by default
 * `dist/desktop/web.js` (electron/web/main.ts, bundled), or `build/start.js` (what `npm start` runs after
 * building) when asked.
 */
export function startApp(
  home: string,
  env: NodeJS.ProcessEnv = {},
  entry: 'web' | 'start' = 'web',
): Promise<RunningApp> {
  const script = entry === 'web' ? join(ROOT, 'dist', 'desktop', 'web.js') : join(ROOT, 'build', 'start.js');
  const child = spawn(process.execPath, [script, '--no-open'], {
    env: { ...process.env, ...env, MAILSIEVE_HOME: home, MAILSIEVE_NO_BROWSER: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  /** Callers waiting for the launch address they asked for. */
  const waiting: ((url: string) => void)[] = [];
  let isReady = false;
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const match = /^MAILSIEVE_URL=(\S+)$/.exec(line);
      if (!match) return;
      waiting.shift()?.(match[1]);
      if (isReady) return;
      isReady = true;
      resolve({
        url: new URL(match[1]).origin,
        home,
        process: child,
        launchUrl() {
          // Always a new one: the first may be older than a launch address lives.
          return new Promise<string>((resolveUrl) => {
            waiting.push(resolveUrl);
            child.stdin.write('\n');
          });
        },
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    child.once('exit', (code) =>
      reject(new Error(`The app exited (${code}) before it was ready: ${stderr}`)),
    );
  });
}

export function launchChromium(): Promise<Browser> {
  // test/e2e/globalSetup.ts stops the run before this when there is no browser; the benchmarks get the line.
  if (!CHROMIUM) return Promise.reject(new Error(noBrowserMessage()));
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * Opens the app in a new context and waits until its root says it is ready. An init script records every
 * screen heading shown, so a test can tell the Progress screen was on screen, however briefly.
 */
export async function openApp(
  browser: Browser,
  app: RunningApp,
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
    colorScheme: options.colorScheme ?? 'light',
  });
  // A string, not a function: this module is compiled without DOM types (the benchmarks use it too).
  await context.addInitScript(`(() => {
    const seen = [];
    window.__headings = seen;
    new MutationObserver(() => {
      for (const heading of document.querySelectorAll('h1')) {
        const text = heading.textContent ?? '';
        if (seen.at(-1) !== text) seen.push(text);
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  })()`);
  const page = await context.newPage();
  // Turn on file-chooser interception now: turned on lazily by the first waitForEvent, it can miss a chooser
  // opened at once by a key press.
  page.on('filechooser', () => undefined);
  await page.goto(await app.launchUrl());
  await page.locator('#root[data-app-state="ready"]').waitFor();
  return { context, page };
}

export async function headingsSeen(page: Page): Promise<string[]> {
  return page.evaluate<string[]>('window.__headings');
}
