import type { StateCreator } from 'zustand';
import { app, eventsConnected } from '../platform/app.js';
import type { AppState, NavigationSlice } from './types.js';

let noticeId = 0;

export const createNavigationSlice: StateCreator<AppState, [], [], NavigationSlice> = (set, get) => ({
  appState: 'loading',
  startupError: null,
  screen: { name: 'new' },
  notice: null,
  isAppLinked: true,
  setAppLinked(isLinked) {
    if (get().isAppLinked !== isLinked) set({ isAppLinked: isLinked });
  },
  navigate(screen) {
    set({ screen });
    if (screen.name === 'job' || screen.name === 'summary') void get().loadJob(screen.jobId);
    if (screen.name === 'history') void get().loadHistory();
    if (screen.name === 'new') void get().loadRecentFiles();
  },
  notify(text, tone = 'info') {
    set({ notice: { id: ++noticeId, text, tone } });
  },
  async init() {
    const [info, connection] = await Promise.all([app.getAppInfo(), app.getConnection()]);
    if (!info.ok || !connection.ok) {
      const error = !info.ok ? info.error : !connection.ok ? connection.error : undefined;
      set({ appState: 'failed', startupError: error?.message ?? 'Mailsieve could not start.' });
      return;
    }
    set({ appInfo: info.value, connection: connection.value });
    await Promise.all([get().loadRecentFiles(), get().loadActivity(), eventsConnected]);
    set({ appState: 'ready' });
  },
});
