// The application menu: File › Open list… (Ctrl/Cmd+O) and Open recent, rebuilt when jobs change.
import { dialog, Menu, type BrowserWindow, type MenuItemConstructorOptions } from 'electron';
import { EVENT_IPC_CHANNEL } from '../../shared/desktop/methods.js';
import type { DesktopCore } from '../core/desktop.js';
import { pickListFile } from './dialogs.js';

async function openListFromMenu(
  core: DesktopCore,
  mainWindow: BrowserWindow | undefined,
  path?: string,
): Promise<void> {
  if (!mainWindow) return;
  const chosen = path ?? (await pickListFile(mainWindow));
  if (!chosen) return;
  const reply = await core.handle('files:add-path', { path: chosen });
  if (reply.ok) mainWindow.webContents.send(EVENT_IPC_CHANNEL, 'files:opened', reply.value);
  else void dialog.showMessageBox(mainWindow, { type: 'error', message: reply.error.message });
}

export async function buildMenu(
  core: DesktopCore,
  mainWindow: () => BrowserWindow | undefined,
): Promise<void> {
  const open = (path?: string) => void openListFromMenu(core, mainWindow(), path);
  const recent = await core.handle('files:list-recent', {});
  const recentItems: MenuItemConstructorOptions[] =
    recent.ok && Array.isArray(recent.value) && recent.value.length > 0
      ? (recent.value as { path: string; name: string }[]).map((file) => ({
          label: file.name,
          toolTip: file.path,
          click: () => open(file.path),
        }))
      : [{ label: 'No recent lists', enabled: false }];
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open list…', accelerator: 'CmdOrCtrl+O', click: () => open() },
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
