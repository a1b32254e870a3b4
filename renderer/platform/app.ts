// The renderer's one door to the desktop core: `window.app` from Electron's preload, or the web client in
// browser mode. Nothing else in the renderer talks to the outside.
import type { DesktopApi } from '../../shared/desktop/api.js';
import { createWebApp } from './webApp.js';

declare global {
  interface Window {
    readonly app?: DesktopApi<File>;
  }
}

function resolveApp(): { api: DesktopApi<File>; connected: Promise<void> } {
  if (window.app) return { api: window.app, connected: Promise.resolve() };
  const web = createWebApp();
  return { api: web, connected: web.connected };
}

const resolved = resolveApp();
export const app: DesktopApi<File> = resolved.api;
/** Resolves once core events flow (at once under Electron). */
export const eventsConnected: Promise<void> = resolved.connected;
