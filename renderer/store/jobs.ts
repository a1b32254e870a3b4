import type { StateCreator } from 'zustand';
import { app } from '../platform/app.js';
import { JOB_STATUS_LABELS } from '../format.js';
import type { AppState, JobsSlice } from './types.js';

/** Jobs of the last run whose end has been announced. */
const announced = new Set<number>();
const ACTIVE = new Set(['queued', 'uploading', 'processing', 'downloading']);

export const createJobsSlice: StateCreator<AppState, [], [], JobsSlice> = (set, get) => ({
  activity: { running: [], resumed: [] },
  async loadActivity() {
    const reply = await app.getJobActivity();
    if (!reply.ok) return;
    set({ activity: reply.value });
    // A job left running when the app closed, finished since: say so once.
    for (const job of reply.value.resumed) {
      if (ACTIVE.has(job.status) || announced.has(job.id)) continue;
      announced.add(job.id);
      get().notify(
        `“${job.fileName}” (job ${job.id}), left running when Mailsieve closed, has ended: ${JOB_STATUS_LABELS[job.status]?.toLowerCase() ?? job.status}. It is in History.`,
        job.status === 'failed' ? 'error' : 'info',
      );
    }
  },
  jobs: {},
  progress: {},
  preview: null,
  exportState: { status: 'idle' },
  purchaseState: { status: 'idle' },
  async loadJob(jobId) {
    if (!get().jobs[jobId]) set({ jobs: { ...get().jobs, [jobId]: { status: 'loading' } } });
    const reply = await app.getJob({ jobId });
    set({
      jobs: {
        ...get().jobs,
        [jobId]: reply.ok
          ? { status: 'ready', value: reply.value }
          : { status: 'failed', error: reply.error.message },
      },
    });
    if (reply.ok && reply.value.progress) get().setProgress(reply.value.progress);
  },
  setProgress(progress) {
    set({ progress: { ...get().progress, [progress.jobId]: progress } });
  },
  async cancelJob(jobId) {
    const reply = await app.cancelJob({ jobId });
    if (!reply.ok) return get().notify(reply.error.message, 'error');
    set({ jobs: { ...get().jobs, [jobId]: { status: 'ready', value: reply.value } } });
  },
  async rerunJob(jobId) {
    const reply = await app.rerunJob({ jobId });
    if (!reply.ok) return get().notify(reply.error.message, 'error');
    get().navigate({ name: 'job', jobId: reply.value.jobId });
  },
  async deleteJob(jobId) {
    const reply = await app.deleteJob({ jobId });
    if (!reply.ok) {
      get().notify(reply.error.message, 'error');
      return false;
    }
    const { [jobId]: _removed, ...rest } = get().jobs;
    set({ jobs: rest });
    get().notify('The job and its files were deleted.');
    void get().loadHistory();
    return true;
  },
  async showPreview(jobId, key, filter, title) {
    set({ preview: { jobId, key, filter, title, state: { status: 'loading' } } });
    const state = await get().readRows(jobId, filter, 0, 100);
    const current = get().preview;
    if (!current || current.jobId !== jobId || current.key !== key) return;
    set({ preview: { ...current, state } });
  },
  async readRows(jobId, filter, offset, limit) {
    const reply = await app.previewRows({ jobId, filter, offset, limit });
    return reply.ok
      ? { status: 'ready', value: reply.value }
      : { status: 'failed', error: reply.error.message };
  },
  counts: {},
  async loadCounts(jobId) {
    if (get().counts[jobId]?.status === 'loading') return;
    set({ counts: { ...get().counts, [jobId]: { status: 'loading' } } });
    const reply = await app.getJobCounts({ jobId });
    set({
      counts: {
        ...get().counts,
        [jobId]: reply.ok
          ? { status: 'ready', value: reply.value }
          : { status: 'failed', error: reply.error.message },
      },
    });
  },
  closePreview() {
    set({ preview: null });
  },
  async exportJob(jobId, kind, statuses, choices, filter, maxBounceRate) {
    set({ exportState: { status: 'working' } });
    const reply = await app.exportJob({
      jobId,
      kind,
      ...(kind === 'custom' ? { statuses: [...statuses] } : {}),
      ...(choices ? { choices } : {}),
      ...(filter ? { filter } : {}),
      ...(maxBounceRate !== undefined ? { maxBounceRate } : {}),
    });
    if (!reply.ok) return set({ exportState: { status: 'failed', error: reply.error.message } });
    const saved = await app.saveExport(reply.value);
    if (!saved.ok) return set({ exportState: { status: 'failed', error: saved.error.message } });
    if (!saved.value.saved) return set({ exportState: { status: 'idle' } });
    set({ exportState: { status: 'done', info: reply.value, path: saved.value.path } });
    void get().loadJob(jobId);
  },
  async showInFolder(path) {
    const reply = await app.showInFolder?.(path);
    if (reply && !reply.ok) get().notify(reply.error.message, 'error');
  },
  resetExport() {
    set({ exportState: { status: 'idle' } });
  },
  async saveReport(jobId, report) {
    const reply = await app.saveReport({ jobId, report });
    if (!reply.ok) {
      get().notify(reply.error.message, 'error');
      return null;
    }
    const saved = await app.saveExport(reply.value);
    if (!saved.ok) {
      get().notify(saved.error.message, 'error');
      return null;
    }
    void get().loadJob(jobId);
    return saved.value.saved ? { path: saved.value.path, fileName: reply.value.fileName } : null;
  },
  async saveSummaryPdf(fileName) {
    if (!app.savePagePdf) {
      // Browser mode: the page's print, whose dialog saves as PDF (the print styles make it the summary).
      window.print();
      return null;
    }
    const reply = await app.savePagePdf(fileName);
    if (!reply.ok) {
      get().notify(reply.error.message, 'error');
      return null;
    }
    return reply.value.saved ? { path: reply.value.path, fileName } : null;
  },
  async purchaseJob(jobId, fields, matchType) {
    set({ purchaseState: { status: 'working', jobId } });
    const reply = await app.purchaseJob({ jobId, fields: [...fields], matchType });
    if (!reply.ok) {
      set({ purchaseState: { status: 'failed', jobId, error: reply.error.message } });
      return false;
    }
    set({
      purchaseState: { status: 'idle' },
      jobs: { ...get().jobs, [jobId]: { status: 'ready', value: reply.value } },
    });
    get().notify('Bought: the list runs again for its results.');
    return true;
  },
  resetPurchase() {
    set({ purchaseState: { status: 'idle' } });
  },
  async recheckJob(jobId) {
    const reply = await app.recheckJob({ jobId });
    if (!reply.ok) {
      get().notify(reply.error.message, 'error');
      return false;
    }
    set({ jobs: { ...get().jobs, [jobId]: { status: 'ready', value: reply.value } } });
    return true;
  },
  async cancelRecheck(jobId) {
    const reply = await app.cancelRecheck({ jobId });
    if (!reply.ok) return get().notify(reply.error.message, 'error');
    set({ jobs: { ...get().jobs, [jobId]: { status: 'ready', value: reply.value } } });
  },
});
