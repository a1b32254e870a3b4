// The native dialogs the shell offers: open a list (the IPC shell channel and File › Open list… alike).
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
