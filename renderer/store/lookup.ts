import type { StateCreator } from 'zustand';
import type { ReferenceKind } from '../../shared/desktop/contract.js';
import { app } from '../platform/app.js';
import type { AppState, LookupSlice, ReferenceImportState } from './types.js';

/** Cancels the upload under way (browser mode copies the file to the app before importing it). */
let uploading: AbortController | undefined;
/** A token per import, so a late answer of an older one is dropped. */
let importRun = 0;

export const createLookupSlice: StateCreator<AppState, [], [], LookupSlice> = (set, get) => {
  const importing = (): Extract<ReferenceImportState, { status: 'importing' }> | undefined => {
    const state = get().referenceImport;
    return state.status === 'importing' ? state : undefined;
  };

  async function runImport(
    run: number,
    kind: ReferenceKind,
    fileName: string,
    source: { fileId: string } | { path: string },
  ): Promise<void> {
    set({ referenceImport: { status: 'importing', kind, fileName, progress: null, isCancelling: false } });
    const reply = await app.importReferenceFile({ kind, ...source });
    if (run !== importRun) return;
    set({
      referenceImport: reply.ok
        ? { status: 'done', report: reply.value }
        : { status: 'failed', kind, fileName, error: reply.error.message },
    });
  }

  return {
    lookup: { status: 'idle' },
    clearLookup() {
      set({ lookup: { status: 'idle' } });
    },
    async lookUpPerson(query) {
      set({ lookup: { status: 'looking', query } });
      const reply = await app.lookUpPerson(query);
      // The way of looking up changed meanwhile (the answer was cleared): this answer is stale.
      const now = get().lookup;
      if (now.status !== 'looking' || now.query !== query) return;
      set({
        lookup: reply.ok
          ? { status: 'done', query, answer: reply.value }
          : { status: 'failed', query, error: reply.error.message },
      });
    },

    referenceImport: { status: 'idle' },
    async importReferenceFile(kind, file) {
      const run = ++importRun;
      if (file) {
        // Browser mode: the file is uploaded to the app first (with its progress), then imported.
        uploading?.abort();
        const controller = (uploading = new AbortController());
        set({ referenceImport: { status: 'uploading', kind, fileName: file.name, progress: null } });
        let shown = 0;
        const staged = await app.addFile(file, {
          signal: controller.signal,
          onProgress: (loaded, total) => {
            const current = get().referenceImport;
            if (current.status !== 'uploading' || run !== importRun || Date.now() - shown < 100) return;
            shown = Date.now();
            set({ referenceImport: { ...current, progress: { bytesRead: loaded, totalBytes: total } } });
          },
        });
        if (uploading === controller) uploading = undefined;
        if (run !== importRun) return;
        if (!staged.ok) {
          if (staged.error.code === 'cancelled') return set({ referenceImport: { status: 'idle' } });
          return set({
            referenceImport: { status: 'failed', kind, fileName: file.name, error: staged.error.message },
          });
        }
        return runImport(run, kind, file.name, { fileId: staged.value.fileId });
      }
      // The desktop app: the native dialog picks the file, read where it is.
      if (!app.pickReferenceFile) return;
      const picked = await app.pickReferenceFile(kind);
      if (run !== importRun) return;
      if (!picked.ok)
        return set({
          referenceImport: { status: 'failed', kind, fileName: '', error: picked.error.message },
        });
      if (!picked.value) return;
      return runImport(run, kind, picked.value.name, { path: picked.value.path });
    },
    async cancelReferenceImport() {
      const state = get().referenceImport;
      if (state.status === 'uploading') {
        uploading?.abort();
        return;
      }
      const current = importing();
      if (!current || current.isCancelling) return;
      set({ referenceImport: { ...current, isCancelling: true } });
      await app.cancelReferenceImport();
    },
    setReferenceImportProgress(progress) {
      const current = importing();
      if (current && current.fileName === progress.fileName && current.kind === progress.kind)
        set({ referenceImport: { ...current, progress } });
    },
  };
};
