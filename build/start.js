#!/usr/bin/env node
// `npm start` (after the build): Mailsieve as the desktop app when Electron's binary is here; otherwise
// browser mode, the same core behind a loopback web host with the UI in a Chromium/Chrome app window (or the
// address printed). It says which mode it chose and why (DESIGN.md, "Electron on our machines").
//
//   npm start                    Electron if it can be had, else browser mode
//   npm start -- --browser       browser mode whatever is installed
//   npm start -- --no-open       browser mode without opening a window (prints the address)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const electronDir = join(root, 'node_modules', 'electron');
const args = process.argv.slice(2);

/** Electron's binary, if installed: its package writes path.txt once the download succeeded. */
function electronBinary() {
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const path = join(process.env.ELECTRON_OVERRIDE_DIST_PATH, 'electron');
    return existsSync(path) ? path : undefined;
  }
  const pathFile = join(electronDir, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(electronDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}

/**
 * Runs Electron's own installer once per Electron version (package.json's allowScripts denies it at npm ci).
 * Quiet, bounded, and remembered: where it cannot download, later starts do not wait for it again.
 */
function tryElectronInstallerOnce() {
  if (!existsSync(join(electronDir, 'install.js'))) return 'Electron is not installed';
  const version = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
  const marker = join(root, 'node_modules', '.cache', 'mailsieve', `electron-install-${version}`);
  if (existsSync(marker))
    return `Electron ${version}’s binary could not be downloaded earlier (${readFileSync(marker, 'utf8').trim()})`;
  process.stdout.write(`Mailsieve: Electron’s binary is missing; trying its installer once…\n`);
  const result = spawnSync(process.execPath, [join(electronDir, 'install.js')], {
    stdio: 'ignore',
    timeout: 120_000,
  });
  if (electronBinary()) return undefined;
  const why = result.error ? result.error.message : `installer exit code ${result.status}`;
  mkdirSync(dirname(marker), { recursive: true });
  writeFileSync(marker, `${why}\n`);
  return `Electron ${version}’s binary could not be downloaded (${why})`;
}

function hasDisplay() {
  return process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

function run(command, commandArgs, env = process.env) {
  const child = spawn(command, commandArgs, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code) => process.exit(code ?? 0));
}

/** Browser mode runs in this process (one Node start fewer before the window is usable). */
async function browserMode(reason) {
  process.env.MAILSIEVE_MODE_REASON = reason;
  await import(pathToFileURL(join(root, 'dist', 'desktop', 'web.js')).href);
}

if (args.includes('--browser') || args.includes('--no-open') || process.env.MAILSIEVE_MODE === 'browser') {
  await browserMode('asked for');
} else {
  const why = electronBinary() ? undefined : tryElectronInstallerOnce();
  const binary = electronBinary();
  if (binary && hasDisplay()) {
    process.stdout.write('Mailsieve: desktop mode (Electron).\n');
    run(binary, [root]);
  } else {
    await browserMode(
      binary
        ? 'Electron is installed, but there is no display for its window'
        : (why ?? 'Electron is not available'),
    );
  }
}
