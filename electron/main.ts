// The Electron shell, kept thin: one window (context isolation, sandbox, no Node), the renderer served from
// disk through the privileged `app:` scheme with a strict CSP, navigation and new windows refused, every IPC
// call checked to come from that window's own page, menus, native dialogs, and safeStorage for keys. All
// the work is the desktop core's (electron/core/desktop.ts), the same one browser mode serves over HTTP.
import { copyFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  net,
  protocol,
  safeStorage,
  session,
  shell,
  type IpcMainInvokeEvent,
  type MenuItemConstructorOptions,
} from 'electron';
import { z } from 'zod';
import type { Reply } from '../shared/desktop/contract.js';
import { EVENT_IPC_CHANNEL, METHOD_OF_CHANNEL, SHELL_CHANNELS } from '../shared/desktop/methods.js';
import { createDesktopCore, type DesktopCore } from './core/desktop.js';
import { appHome } from './core/home.js';
import { SafeStorageSecretStore } from './core/secrets.js';
import { CONTENT_SECURITY_POLICY } from './web/host.js';

const distDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const rendererDir = normalize(join(distDir, 'renderer') + sep);
const APP_ORIGIN = 'app://mailsieve';
const INDEX_URL = `${APP_ORIGIN}/index.html`;

protocol.registerSchemesAsPrivileged([
  { scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } },
]);

let mainWindow: BrowserWindow | undefined;
let core: DesktopCore | undefined;

/** better-sqlite3 built for Electron's ABI, kept beside Node's build (DESIGN.md: one build per runtime). */
function electronSqliteBinding(): string | undefined {
  const candidates = [
    process.env.MAILSIEVE_SQLITE_BINDING,
    join(distDir, '..', 'build', 'native', `electron-${process.versions.modules}`, 'better_sqlite3.node'),
    join(process.resourcesPath ?? '', 'native', 'better_sqlite3.node'),
  ];
  return candidates.find((path): path is string => Boolean(path && existsSync(path)));
}

function fail(code: string, message: string): Reply<never> {
  return { ok: false, error: { code, message } };
}

/** Only the main window's own page may call the core. */
function isTrusted(event: IpcMainInvokeEvent): boolean {
  return (
    event.sender === mainWindow?.webContents && (event.senderFrame?.url ?? '').startsWith(`${APP_ORIGIN}/`)
  );
}

const saveExportInput = z.object({ exportId: z.number().int() });
const showInFolderInput = z.object({ path: z.string().min(1) });
const savePagePdfInput = z.object({ fileName: z.string().min(1).max(200) });
/** Files the user saved in this session: the only ones Show in folder reveals. */
const savedPaths = new Set<string>();

function registerIpc(desktop: DesktopCore): void {
  for (const channel of Object.keys(METHOD_OF_CHANNEL)) {
    ipcMain.handle(channel, (event, input: unknown) =>
      isTrusted(event)
        ? desktop.handle(channel, input)
        : fail('forbidden', 'Refused: not the Mailsieve window.'),
    );
  }
  ipcMain.handle(SHELL_CHANNELS.openListDialog, async (event) => {
    if (!isTrusted(event) || !mainWindow) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const picked = await dialog.showOpenDialog(mainWindow, {
      title: 'Open list',
      properties: ['openFile'],
      filters: [{ name: 'Email lists', extensions: ['csv', 'txt', 'xlsx', 'zip'] }],
    });
    const path = picked.filePaths[0];
    if (picked.canceled || !path) return { ok: true, value: null };
    return desktop.handle('files:add-path', { path });
  });
  ipcMain.handle(SHELL_CHANNELS.saveExportDialog, async (event, input: unknown) => {
    if (!isTrusted(event) || !mainWindow) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = saveExportInput.safeParse(input);
    if (!parsed.success) return fail('invalid-input', 'exportId: expected a number');
    const file = desktop.exportFile(parsed.data.exportId);
    if (!file) return fail('not-found', 'That export is gone.');
    const target = await dialog.showSaveDialog(mainWindow, {
      title: 'Save export',
      defaultPath: join(app.getPath('documents'), file.fileName),
    });
    if (target.canceled || !target.filePath) return { ok: true, value: { saved: false, path: null } };
    try {
      await copyFile(file.path, target.filePath);
    } catch (error) {
      return fail('file-unwritable', `Could not save to ${target.filePath}: ${(error as Error).message}`);
    }
    savedPaths.add(target.filePath);
    return { ok: true, value: { saved: true, path: target.filePath } };
  });
  ipcMain.handle(SHELL_CHANNELS.showInFolder, (event, input: unknown) => {
    if (!isTrusted(event)) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = showInFolderInput.safeParse(input);
    if (!parsed.success || !savedPaths.has(parsed.data.path))
      return fail('not-found', 'Only a file saved from Mailsieve can be shown.');
    shell.showItemInFolder(parsed.data.path);
    return { ok: true, value: null };
  });
  // The printable summary: the page as it prints (its print styles), one A4 page, saved as PDF.
  ipcMain.handle(SHELL_CHANNELS.savePagePdf, async (event, input: unknown) => {
    if (!isTrusted(event) || !mainWindow) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = savePagePdfInput.safeParse(input);
    if (!parsed.success) return fail('invalid-input', 'fileName: expected a name');
    const target = await dialog.showSaveDialog(mainWindow, {
      title: 'Save summary as PDF',
      defaultPath: join(app.getPath('documents'), parsed.data.fileName.replace(/[/\\]/g, '_')),
      filters: [{ name: 'PDF', extensions: ['pdf'] }],
    });
    if (target.canceled || !target.filePath) return { ok: true, value: { saved: false, path: null } };
    try {
      const pdf = await mainWindow.webContents.printToPDF({ pageSize: 'A4', printBackground: true });
      await writeFile(target.filePath, pdf);
    } catch (error) {
      return fail('file-unwritable', `Could not save to ${target.filePath}: ${(error as Error).message}`);
    }
    savedPaths.add(target.filePath);
    return { ok: true, value: { saved: true, path: target.filePath } };
  });
}

async function openListFromMenu(path?: string): Promise<void> {
  if (!core || !mainWindow) return;
  let chosen = path;
  if (!chosen) {
    const picked = await dialog.showOpenDialog(mainWindow, {
      title: 'Open list',
      properties: ['openFile'],
      filters: [{ name: 'Email lists', extensions: ['csv', 'txt', 'xlsx', 'zip'] }],
    });
    chosen = picked.canceled ? undefined : picked.filePaths[0];
  }
  if (!chosen) return;
  const reply = await core.handle('files:add-path', { path: chosen });
  if (reply.ok) mainWindow.webContents.send(EVENT_IPC_CHANNEL, 'files:opened', reply.value);
  else void dialog.showMessageBox(mainWindow, { type: 'error', message: reply.error.message });
}

async function buildMenu(): Promise<void> {
  const recent = core ? await core.handle('files:list-recent', {}) : undefined;
  const recentItems: MenuItemConstructorOptions[] =
    recent?.ok && Array.isArray(recent.value) && recent.value.length > 0
      ? (recent.value as { path: string; name: string }[]).map((file) => ({
          label: file.name,
          toolTip: file.path,
          click: () => void openListFromMenu(file.path),
        }))
      : [{ label: 'No recent lists', enabled: false }];
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open list…', accelerator: 'CmdOrCtrl+O', click: () => void openListFromMenu() },
        { label: 'Open recent', submenu: recentItems },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

function createWindow(): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 860,
    minWidth: 800,
    minHeight: 560,
    show: false,
    title: 'Mailsieve',
    webPreferences: {
      preload: join(distDir, 'electron', 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());
  void window.loadURL(INDEX_URL);
  return window;
}

// Every web contents: no navigation away from the app, no new windows, no permissions.
app.on('web-contents-created', (_event, contents) => {
  contents.on('will-navigate', (event, url) => {
    if (url !== INDEX_URL) event.preventDefault();
  });
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-attach-webview', (event) => event.preventDefault());
});

if (!app.requestSingleInstanceLock()) app.quit();
app.on('second-instance', () => {
  if (mainWindow?.isMinimized()) mainWindow.restore();
  mainWindow?.focus();
});

app.whenReady().then(
  async () => {
    const home = appHome();
    // The renderer from disk, with the CSP on every response; nothing outside dist/renderer is served.
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
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));

    const binding = electronSqliteBinding();
    core = createDesktopCore({
      home,
      secrets: new SafeStorageSecretStore(home, safeStorage),
      mode: 'electron',
      hasNativeDialogs: true,
      version: app.getVersion(),
      ...(binding ? { nativeBinding: binding } : {}),
    });
    registerIpc(core);
    core.on((event, payload) => {
      mainWindow?.webContents.send(EVENT_IPC_CHANNEL, event, payload);
      if (event === 'jobs:changed') void buildMenu();
    });
    await buildMenu();
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
