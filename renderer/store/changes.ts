// What changed since the last run (issue 37) on a job's Results: a page of the changed rows against the job's
// earlier run (jobs:changes: the core computes the comparison once and keeps it), and the export of only the
// changed rows (jobs:export-changes), saved as any export is.
import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import type { AppState, ChangesSlice } from './types.js';

/** Changed rows a page of the view shows. */
export const CHANGES_PAGE = 50;

/** The request of each job's latest page: an older answer arriving late is dropped. */
const latest = new Map<number, number>();
let requests = 0;

export const createChangesSlice: StateCreator<AppState, [], [], ChangesSlice> = (set, get) => ({
  changes: {},
  changesExport: { status: 'idle' },
  async loadChanges(jobId, offset) {
    const request = ++requests;
    latest.set(jobId, request);
    const shown = get().changes[jobId];
    if (shown?.status !== 'ready') set({ changes: { ...get().changes, [jobId]: { status: 'loading' } } });
    const reply = await app.getJobChanges({ jobId, offset, limit: CHANGES_PAGE });
    if (latest.get(jobId) !== request) return;
    set({
      changes: {
        ...get().changes,
        [jobId]: reply.ok
          ? { status: 'ready', value: { ...reply.value, offset } }
          : { status: 'failed', error: reply.error.message },
      },
    });
  },
  async exportChanges(jobId) {
    set({ changesExport: { status: 'working', jobId } });
    const reply = await app.exportJobChanges({ jobId });
    if (!reply.ok) return set({ changesExport: { status: 'failed', jobId, error: reply.error.message } });
    const saved = await app.saveExport(reply.value);
    if (!saved.ok) return set({ changesExport: { status: 'failed', jobId, error: saved.error.message } });
    set({
      changesExport: saved.value.saved
        ? { status: 'done', jobId, info: reply.value, path: saved.value.path }
        : { status: 'idle' },
    });
    void get().loadJob(jobId);
  },
});
