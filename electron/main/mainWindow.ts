// The main window's options, apart from Electron itself so that a test can read them in Node: context
// isolation, sandbox, no Node, and no middle-click navigation (the Electron security checklist). The options
// stay a literal at `new BrowserWindow(…)`, where electronegativity reads them (AUXCLICK_JS_CHECK and others).
import type { BrowserWindowConstructorOptions } from 'electron';

/** Electron's BrowserWindow, or anything constructed like it. */
export type WindowConstructor<W> = new (options: BrowserWindowConstructorOptions) => W;

export function newMainWindow<W>(BrowserWindow: WindowConstructor<W>, preload: string): W {
  return new BrowserWindow({
    width: 1280,
    height: 860,
    minWidth: 800,
    minHeight: 560,
    show: false,
    title: 'Mailsieve',
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: false,
      // A middle click (auxclick) would open a link in a new window or navigate: off, as new windows are.
      disableBlinkFeatures: 'Auxclick',
    },
  });
}
