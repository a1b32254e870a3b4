// The renderer's one door to the desktop core: `window.app` from Electron's preload, or the web client in
// browser mode. Nothing else in the renderer talks to the outside.
import type { DesktopApi } from '../../shared/desktop/api.js';
import { createWebApp } from './webApp.js';

declare global {
  interface Window {
    readonly app?: DesktopApi<File>;
  }
}

function resolveApp(): {
  api: DesktopApi<File>;
  connected: Promise<void>;
  onLink: (listener: (isUp: boolean) => void) => void;
} {
  if (window.app) return { api: window.app, connected: Promise.resolve(), onLink: () => undefined };
  const web = createWebApp();
  return { api: web, connected: web.connected, onLink: web.onLink };
}

const resolved = resolveApp();
/** Tells whether the app's core answers (browser mode loses it when the app is stopped). */
export const onAppLink = resolved.onLink;
export const app: DesktopApi<File> = resolved.api;
/** Resolves once core events flow (at once under Electron). */
export const eventsConnected: Promise<void> = resolved.connected;
