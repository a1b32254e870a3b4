import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, HistorySlice } from './types.js';

let historyRun = 0;

export const createHistorySlice: StateCreator<AppState, [], [], HistorySlice> = (set, get) => ({
  historyQuery: { search: '', status: '', from: '', to: '', sort: 'created', direction: 'desc' },
  history: { status: 'idle' },
  setHistoryQuery(patch) {
    set({ historyQuery: { ...get().historyQuery, ...patch } });
    void get().loadHistory();
  },
  async loadHistory() {
    const run = ++historyRun;
    const query = get().historyQuery;
    if (get().history.status !== 'ready') set({ history: { status: 'loading' } });
    const reply = await app.listJobs({
      ...(query.search.trim() ? { search: query.search.trim() } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(query.from ? { from: query.from } : {}),
      ...(query.to ? { to: query.to } : {}),
      sort: query.sort,
      direction: query.direction,
    });
    if (run !== historyRun) return;
    set({
      history: reply.ok
        ? { status: 'ready', value: reply.value }
        : { status: 'failed', error: reply.error.message },
    });
  },
});
