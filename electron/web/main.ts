// Browser mode: the desktop core behind the loopback web host, with the UI opened in Chromium or Chrome as an
// app window (or the address printed when no such browser or display is there). `npm start` runs this when
// Electron cannot be had. Stops on Ctrl+C, or when the app window it opened is closed.
//
// The window opens a launch file only the user can read (the token never goes on the browser's command line,
// which every local user can see); a printed address opens the app once, within 60 s. Each line read on
// standard input (Enter, in a terminal) prints a new one: `MAILSIEVE_URL=…`.
//
//   node dist/desktop/web.js [--no-open] [--port N]   (this file bundled by build/build.js)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createDesktopCore } from '../core/desktop.js';
import { appHome } from '../core/home.js';
import { FileSecretStore } from '../core/secrets.js';
import { findBrowser } from './findBrowser.js';
import { startWebHost } from './host.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const distDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function hasDisplay(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.platform !== 'linux' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

function version(): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

const home = appHome();
const portArg = argValue('--port');
const core = createDesktopCore({
  home,
  secrets: new FileSecretStore(home),
  mode: 'browser',
  hasNativeDialogs: false,
  version: version(),
});
const host = await startWebHost({
  core,
  rendererDir: join(distDir, 'renderer'),
  ...(portArg ? { port: Number(portArg) } : {}),
});

const reason = process.env.MAILSIEVE_MODE_REASON ?? 'Electron is not available here';
process.stdout.write(`Mailsieve: browser mode (${reason}). History and results in ${home}\n`);
const printLaunchUrl = () => process.stdout.write(`MAILSIEVE_URL=${host.newLaunchUrl()}\n`);
createInterface({ input: process.stdin }).on('line', printLaunchUrl);

let browser: ChildProcess | undefined;
const isOpenWanted = !process.argv.includes('--no-open') && process.env.MAILSIEVE_NO_BROWSER !== '1';
const executable = isOpenWanted ? findBrowser() : undefined;
if (isOpenWanted && executable && hasDisplay()) {
  const profile = join(home, 'browser-profile');
  mkdirSync(profile, { recursive: true, mode: 0o700 });
  const launchFile = host.writeLaunchFile(join(home, 'launch'));
  const args = [
    `--app=${pathToFileURL(launchFile).href}`,
    `--user-data-dir=${profile}`,
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--window-size=1280,860',
  ];
  // Chromium refuses to run as root with its sandbox.
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  const started = Date.now();
  browser = spawn(executable, args, { stdio: 'ignore' });
  process.stdout.write(
    `Opened the app window in ${executable}. Close it (or press Ctrl+C) to stop Mailsieve.\n`,
  );
  browser.once('exit', () => {
    // An exit within a few seconds means an existing browser took the window over: keep serving it.
    if (Date.now() - started > 5000) void shutdown();
  });
  browser.once('error', () => {
    process.stdout.write(`Could not open ${executable}: open this address in a browser.\n`);
    printLaunchUrl();
  });
} else {
  printLaunchUrl();
  process.stdout.write(
    'The address opens Mailsieve once, within 60 seconds; press Enter here for a new one.\n',
  );
}
if (isOpenWanted && !(executable && hasDisplay())) {
  process.stdout.write(
    executable
      ? 'No display to open a window on: open the address above in a browser on this machine.\n'
      : 'No Chromium or Chrome found: open the address above in a browser on this machine.\n',
  );
}
process.stdout.write('Press Ctrl+C to stop.\n');

let isStopping = false;
async function shutdown(): Promise<void> {
  if (isStopping) return;
  isStopping = true;
  browser?.kill();
  await host.close();
  await core.close();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
