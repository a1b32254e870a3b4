// The Electron shell, kept thin: one window (window.ts), IPC wiring with every call checked to come from
// that window's own page (ipc.ts), menus (menu.ts), native dialogs (dialogs.ts), and safeStorage for keys.
// All the work is the desktop core's (electron/core/desktop.ts), the same one browser mode serves over HTTP.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { app, BrowserWindow, dialog, safeStorage, session } from 'electron';
import { EVENT_IPC_CHANNEL } from '../../shared/desktop/methods.js';
import { createDesktopCore, type DesktopCore } from '../core/desktop.js';
import { appHome } from '../core/home.js';
import { SafeStorageSecretStore } from '../core/secrets.js';
import { registerIpc } from './ipc.js';
import { buildMenu } from './menu.js';
import { createWindow, distDir, lockDownWebContents, registerAppScheme, serveRenderer } from './window.js';

registerAppScheme();

let mainWindow: BrowserWindow | undefined;
let core: DesktopCore | undefined;
const currentWindow = () => mainWindow;

/** better-sqlite3 built for Electron's ABI, kept beside Node's build (DESIGN.md: one build per runtime). */
function electronSqliteBinding(): string | undefined {
  const candidates = [
    process.env.MAILSIEVE_SQLITE_BINDING,
    join(distDir, '..', 'build', 'native', `electron-${process.versions.modules}`, 'better_sqlite3.node'),
    join(process.resourcesPath ?? '', 'native', 'better_sqlite3.node'),
  ];
  return candidates.find((path): path is string => Boolean(path && existsSync(path)));
}

lockDownWebContents();

if (!app.requestSingleInstanceLock()) app.quit();
app.on('second-instance', () => {
  if (mainWindow?.isMinimized()) mainWindow.restore();
  mainWindow?.focus();
});

app.whenReady().then(
  async () => {
    const home = appHome();
    serveRenderer();
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));

    const binding = electronSqliteBinding();
    const desktop = createDesktopCore({
      home,
      secrets: new SafeStorageSecretStore(home, safeStorage),
      mode: 'electron',
      hasNativeDialogs: true,
      version: app.getVersion(),
      ...(binding ? { nativeBinding: binding } : {}),
    });
    core = desktop;
    registerIpc(desktop, currentWindow);
    desktop.on((event, payload) => {
      mainWindow?.webContents.send(EVENT_IPC_CHANNEL, event, payload);
      if (event === 'jobs:changed') void buildMenu(desktop, currentWindow);
    });
    await buildMenu(desktop, currentWindow);
    mainWindow = createWindow();
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow();
    });
  },
  (error: unknown) => {
    dialog.showErrorBox('Mailsieve could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
  },
);

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

let isClosing = false;
app.on('before-quit', (event) => {
  if (isClosing || !core) return;
  // Jobs stop where they are and resume next time; the databases close cleanly first.
  event.preventDefault();
  isClosing = true;
  void core.close().finally(() => app.quit());
});
