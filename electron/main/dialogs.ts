// The native dialogs the shell offers: open a list (the IPC shell channel and File › Open list… alike), and
// pick a people or activity file to import (Look up a person).
import { dialog, type BrowserWindow } from 'electron';

/** The list file the user picked, or undefined when they cancelled. */
export async function pickListFile(window: BrowserWindow): Promise<string | undefined> {
  const picked = await dialog.showOpenDialog(window, {
    title: 'Open list',
    properties: ['openFile'],
    filters: [{ name: 'Email lists', extensions: ['csv', 'txt', 'xlsx', 'zip'] }],
  });
  return picked.canceled ? undefined : picked.filePaths[0];
}

/** The people or activity CSV file the user picked to import, or undefined when they cancelled. */
export async function pickReferenceFile(
  window: BrowserWindow,
  kind: 'people' | 'activity',
): Promise<string | undefined> {
  const picked = await dialog.showOpenDialog(window, {
    title: kind === 'people' ? 'Import people file' : 'Import activity file',
    properties: ['openFile'],
    filters: [{ name: 'CSV files', extensions: ['csv', 'txt'] }],
  });
  return picked.canceled ? undefined : picked.filePaths[0];
}
