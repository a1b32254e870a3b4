// IPC wiring: every channel of the desktop contract to the core, each call checked to come from the main
// window's own page, plus the two shell channels (the native open and save dialogs).
import { copyFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { app, dialog, ipcMain, shell, type BrowserWindow, type IpcMainInvokeEvent } from 'electron';
import { z } from 'zod';
import { REFERENCE_KINDS, type Reply } from '../../shared/desktop/contract.js';
import { METHOD_OF_CHANNEL, SHELL_CHANNELS } from '../../shared/desktop/methods.js';
import type { DesktopCore } from '../core/desktop.js';
import { isAppFrameUrl } from './senderOrigin.js';
import { pickListFile, pickReferenceFile } from './dialogs.js';
import { APP_ORIGIN } from './window.js';

function fail(code: string, message: string): Reply<never> {
  return { ok: false, error: { code, message } };
}

const saveExportInput = z.object({ exportId: z.number().int() });
const showInFolderInput = z.object({ path: z.string().min(1) });
const savePagePdfInput = z.object({ fileName: z.string().min(1).max(200) });
const pickReferenceInput = z.object({ kind: z.enum(REFERENCE_KINDS) });
/** Files the user saved in this session: the only ones Show in folder reveals. */
const savedPaths = new Set<string>();

export function registerIpc(desktop: DesktopCore, mainWindow: () => BrowserWindow | undefined): void {
  /** Only the main window's own page may call the core. */
  const isTrusted = (event: IpcMainInvokeEvent): boolean =>
    event.sender === mainWindow()?.webContents && isAppFrameUrl(event.senderFrame?.url, APP_ORIGIN);

  for (const channel of Object.keys(METHOD_OF_CHANNEL)) {
    ipcMain.handle(channel, (event, input: unknown) =>
      isTrusted(event)
        ? desktop.handle(channel, input)
        : fail('forbidden', 'Refused: not the Mailsieve window.'),
    );
  }
  ipcMain.handle(SHELL_CHANNELS.openListDialog, async (event) => {
    const window = mainWindow();
    if (!isTrusted(event) || !window) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const path = await pickListFile(window);
    if (!path) return { ok: true, value: null };
    return desktop.handle('files:add-path', { path });
  });
  // Import reference data from Look up a person (issue #15): the page then imports the path picked.
  ipcMain.handle(SHELL_CHANNELS.pickReferenceFile, async (event, input: unknown) => {
    const window = mainWindow();
    if (!isTrusted(event) || !window) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = pickReferenceInput.safeParse(input);
    if (!parsed.success) return fail('invalid-input', 'kind: expected people, activity or bounces');
    const path = await pickReferenceFile(window, parsed.data.kind);
    return { ok: true, value: path ? { path, name: basename(path) } : null };
  });
  ipcMain.handle(SHELL_CHANNELS.saveExportDialog, async (event, input: unknown) => {
    const window = mainWindow();
    if (!isTrusted(event) || !window) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = saveExportInput.safeParse(input);
    if (!parsed.success) return fail('invalid-input', 'exportId: expected a number');
    const file = desktop.exportFile(parsed.data.exportId);
    if (!file) return fail('not-found', 'That export is gone.');
    const target = await dialog.showSaveDialog(window, {
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
    const window = mainWindow();
    if (!isTrusted(event) || !window) return fail('forbidden', 'Refused: not the Mailsieve window.');
    const parsed = savePagePdfInput.safeParse(input);
    if (!parsed.success) return fail('invalid-input', 'Choose a file name for the summary.');
    const target = await dialog.showSaveDialog(window, {
      title: 'Save summary as PDF',
      defaultPath: join(app.getPath('documents'), parsed.data.fileName.replace(/[/\\]/g, '_')),
      filters: [{ name: 'PDF', extensions: ['pdf'] }],
    });
    if (target.canceled || !target.filePath) return { ok: true, value: { saved: false, path: null } };
    try {
      const pdf = await window.webContents.printToPDF({ pageSize: 'A4', printBackground: true });
      await writeFile(target.filePath, pdf);
    } catch (error) {
      return fail('file-unwritable', `Could not save to ${target.filePath}: ${(error as Error).message}`);
    }
    savedPaths.add(target.filePath);
    return { ok: true, value: { saved: true, path: target.filePath } };
  });
}
