// The one window and what it may load: the renderer from disk through the privileged `app:` scheme with a
// strict CSP on every response, context isolation, sandbox, no Node (mainWindow.ts); navigation and new
// windows refused.
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app, BrowserWindow, net, protocol } from 'electron';
import { CONTENT_SECURITY_POLICY } from '../web/host.js';
import { newMainWindow } from './mainWindow.js';

/** dist/ (this file is dist/electron/main/window.js once built). */
export const distDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const rendererDir = normalize(join(distDir, 'renderer') + sep);
export const APP_ORIGIN = 'app://mailsieve';
const INDEX_URL = `${APP_ORIGIN}/index.html`;

/** Before the app is ready: `app:` is a standard, secure scheme (fetch works, the CSP applies). */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
  ]);
}

/** Once ready: the renderer from disk, with the CSP on every response; nothing outside dist/renderer is served. */
export function serveRenderer(): void {
  protocol.handle('app', (request) => {
    const url = new URL(request.url);
    const file = normalize(join(rendererDir, decodeURIComponent(url.pathname)));
    if (url.host !== 'mailsieve' || !file.startsWith(rendererDir))
      return new Response('Not found', { status: 404 });
    return net.fetch(pathToFileURL(file).toString()).then((response) => {
      const headers = new Headers(response.headers);
      headers.set('content-security-policy', CONTENT_SECURITY_POLICY);
      headers.set('x-content-type-options', 'nosniff');
      return new Response(response.body, { status: response.status, headers });
    });
  });
}

/** Every web contents: no navigation away from the app, no new windows, no permissions. */
export function lockDownWebContents(): void {
  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event, url) => {
      if (url !== INDEX_URL) event.preventDefault();
    });
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });
}

export function createWindow(): BrowserWindow {
  const window = newMainWindow(BrowserWindow, join(distDir, 'electron', 'main', 'preload.cjs'));
  window.once('ready-to-show', () => window.show());
  void window.loadURL(INDEX_URL);
  return window;
}
