// The main window's web preferences: what the Electron security checklist asks. Electron cannot run here, so
// the window is built with a constructor that keeps the options it is given.
import type { BrowserWindowConstructorOptions } from 'electron';
import { describe, expect, it } from 'vitest';
import { newMainWindow } from '../../../electron/main/mainWindow.js';

class KeptOptions {
  constructor(readonly options: BrowserWindowConstructorOptions) {}
}

describe('newMainWindow', () => {
  it('isolates and sandboxes the renderer, without Node and without middle-click navigation', () => {
    const { options } = newMainWindow(KeptOptions, '/app/preload.cjs');
    expect(options.webPreferences).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      // AUXCLICK_JS_CHECK: a middle click must not open a window or navigate.
      disableBlinkFeatures: 'Auxclick',
    });
    expect(options.webPreferences).not.toHaveProperty('enableBlinkFeatures');
    expect(options.webPreferences).not.toHaveProperty('allowRunningInsecureContent');
    expect(options.show).toBe(false);
  });
});
