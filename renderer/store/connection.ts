import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, ConnectionSlice } from './types.js';

export const createConnectionSlice: StateCreator<AppState, [], [], ConnectionSlice> = (set, get) => ({
  appInfo: null,
  connection: null,
  connectionAction: { status: 'idle' },
  recentFiles: [],
  setConnectionInfo(info) {
    set({ connection: info });
  },
  async testConnection(input) {
    set({ connectionAction: { status: 'working', what: 'test' } });
    const reply = await app.testConnection(input);
    set({
      connectionAction: reply.ok
        ? { status: 'tested', value: reply.value }
        : { status: 'failed', error: reply.error.message },
    });
  },
  async saveConnection(input) {
    set({ connectionAction: { status: 'working', what: 'save' } });
    const reply = await app.setConnection(input);
    if (!reply.ok) return set({ connectionAction: { status: 'failed', error: reply.error.message } });
    set({ connection: reply.value, connectionAction: { status: 'saved' } });
    get().notify(
      input.kind === 'embedded' ? 'Using the local service.' : 'Connected to the provider’s service.',
    );
  },
  async clearKey() {
    set({ connectionAction: { status: 'working', what: 'clear' } });
    const reply = await app.clearKey();
    if (!reply.ok) return set({ connectionAction: { status: 'failed', error: reply.error.message } });
    set({ connection: reply.value, connectionAction: { status: 'idle' } });
    get().notify('The stored API key was removed.');
  },
  async loadRecentFiles() {
    const reply = await app.listRecentFiles();
    if (reply.ok) set({ recentFiles: reply.value });
  },
});
