// The native dialogs the shell offers: open a list (the IPC shell channel and File › Open list… alike), and
// pick a people, activity or bounces file to import (Look up a person).
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

const TITLES = {
  people: 'Import people file',
  activity: 'Import activity file',
  bounces: 'Import bounces file',
} as const;

/** The people, activity or bounces CSV file the user picked to import, or undefined when they cancelled. */
export async function pickReferenceFile(
  window: BrowserWindow,
  kind: keyof typeof TITLES,
): Promise<string | undefined> {
  const picked = await dialog.showOpenDialog(window, {
    title: TITLES[kind],
    properties: ['openFile'],
    filters: [{ name: 'CSV files', extensions: ['csv', 'txt'] }],
  });
  return picked.canceled ? undefined : picked.filePaths[0];
}
