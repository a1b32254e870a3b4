import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, ConnectionSlice } from './types.js';

export const createConnectionSlice: StateCreator<AppState, [], [], ConnectionSlice> = (set, get) => ({
  appInfo: null,
  connection: null,
  connectionAction: { status: 'idle' },
  recentFiles: [],
  allowedServices: { status: 'idle' },
  async loadAllowedServices() {
    if (get().allowedServices.status !== 'ready') set({ allowedServices: { status: 'loading' } });
    const reply = await app.getAllowedServices();
    set({
      allowedServices: reply.ok
        ? { status: 'ready', value: reply.value }
        : { status: 'failed', error: reply.error.message },
    });
    // A service no longer allowed is dropped from a mapping in progress.
    if (reply.ok) get().keepAllowedServices(reply.value.services);
  },
  keyQuota: { status: 'idle' },
  async loadKeyQuota() {
    if (get().keyQuota.status !== 'ready') set({ keyQuota: { status: 'loading' } });
    const reply = await app.getKeyQuota();
    set({
      keyQuota: reply.ok
        ? { status: 'ready', value: reply.value }
        : { status: 'failed', error: reply.error.message },
    });
  },
  async setChosenServices(services) {
    const reply = await app.setChosenServices({ services: [...services] });
    if (!reply.ok) return get().notify(reply.error.message, 'error');
    set({ allowedServices: { status: 'ready', value: reply.value } });
    get().keepAllowedServices(reply.value.services);
  },
  setConnectionInfo(info) {
    const previous = get().connection;
    set({ connection: info });
    // Another connection (or key) may allow other services.
    if (
      previous &&
      (previous.kind !== info.kind ||
        previous.provider?.baseUrl !== info.provider?.baseUrl ||
        previous.provider?.keyMask !== info.provider?.keyMask)
    ) {
      void get().loadAllowedServices();
      // Another key's quota: the last one's numbers are not shown meanwhile.
      set({ keyQuota: { status: 'idle' } });
      void get().loadKeyQuota();
    }
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
    get().setConnectionInfo(reply.value);
    set({ connectionAction: { status: 'saved' } });
    void get().loadKeyQuota();
    get().notify(
      input.kind === 'embedded' ? 'Using the local service.' : 'Connected to the provider’s service.',
    );
  },
  async clearKey() {
    set({ connectionAction: { status: 'working', what: 'clear' } });
    const reply = await app.clearKey();
    if (!reply.ok) return set({ connectionAction: { status: 'failed', error: reply.error.message } });
    get().setConnectionInfo(reply.value);
    set({ connectionAction: { status: 'idle' } });
    get().notify('The stored API key was removed.');
  },
  async loadRecentFiles() {
    const reply = await app.listRecentFiles();
    if (reply.ok) set({ recentFiles: reply.value });
  },
});
