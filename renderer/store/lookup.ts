import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, LookupSlice } from './types.js';

export const createLookupSlice: StateCreator<AppState, [], [], LookupSlice> = (set) => ({
  lookup: { status: 'idle' },
  clearLookup() {
    set({ lookup: { status: 'idle' } });
  },
  async lookUpPerson(query) {
    set({ lookup: { status: 'looking', query } });
    const reply = await app.lookUpPerson(query);
    set({
      lookup: reply.ok
        ? { status: 'done', query, answer: reply.value }
        : { status: 'failed', query, error: reply.error.message },
    });
  },
});
