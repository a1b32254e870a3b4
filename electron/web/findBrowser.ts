// Which Chromium or Chrome to use: the one rule shared by browser mode (`npm start`, electron/web/main.ts),
// the end-to-end tests and the app benchmarks (test/helpers/browserApp.ts).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Names a Chromium or Chrome goes by on PATH. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable', 'chrome'];

/** Where Chromium and Chrome are usually installed, beyond PATH. */
function usualLocations(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  if (platform === 'darwin') {
    const apps = ['Google Chrome.app/Contents/MacOS/Google Chrome', 'Chromium.app/Contents/MacOS/Chromium'];
    return [
      ...apps.map((app) => join('/Applications', app)),
      ...(env.HOME ? apps.map((app) => join(env.HOME!, 'Applications', app)) : []),
    ];
  }
  if (platform === 'win32') {
    const bases = [env.PROGRAMFILES, env['PROGRAMFILES(X86)'], env.LOCALAPPDATA].filter(
      (base): base is string => Boolean(base),
    );
    return bases.flatMap((base) => [
      join(base, 'Google', 'Chrome', 'Application', 'chrome.exe'),
      join(base, 'Chromium', 'Application', 'chrome.exe'),
    ]);
  }
  return [];
}

/**
 * The browser to use, or undefined: `MAILSIEVE_BROWSER` when it is set (and then only it: a browser named
 * on purpose is not silently replaced), else /usr/bin/chromium, the usual names on PATH, and the usual
 * macOS and Windows install locations. The first executable found wins.
 */
export function findBrowser(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const exe = platform === 'win32' ? '.exe' : '';
  const candidates = env.MAILSIEVE_BROWSER
    ? [env.MAILSIEVE_BROWSER]
    : [
        ...(platform === 'linux' ? ['/usr/bin/chromium'] : []),
        ...(env.PATH ?? '')
          .split(delimiter)
          .flatMap((dir) => (dir ? NAMES.map((name) => join(dir, name + exe)) : [])),
        ...usualLocations(env, platform),
      ];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** One line saying that no browser was found, and how to install one on this system. */
export function noBrowserMessage(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  if (env.MAILSIEVE_BROWSER)
    return `MAILSIEVE_BROWSER is ${env.MAILSIEVE_BROWSER}, which is not an executable browser: point it to Chromium or Chrome, or unset it.`;
  const install =
    platform === 'darwin'
      ? 'install Google Chrome, or `brew install --cask chromium`'
      : platform === 'win32'
        ? 'install Google Chrome'
        : 'on Debian or Ubuntu: `apt-get install chromium`';
  return `No Chromium or Chrome found (looked at /usr/bin/chromium, chromium, chrome and google-chrome on PATH, and the usual install folders): ${install}, or set MAILSIEVE_BROWSER=/path/to/browser.`;
}
