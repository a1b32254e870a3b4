// Campaign results of a job (issue 37): the job's kept outcomes (outcomes:get), and reading a campaign's bounce
// export and sent list against it (outcomes:import). The files reach the core as Look up a person's do: read
// where they are in the desktop app (their path), uploaded to the app first in browser mode (a staged file).
import type { StateCreator } from 'zustand';
import type { OutcomesImportInput } from '../../shared/desktop/contract.js';
import { app } from '../platform/app.js';
import type { AppState, OutcomesSlice } from './types.js';

/** A token per import, so the late answer of an older one is dropped. */
let importRun = 0;
/** A token per job's outcomes, so a load answered after an import does not put back the older report. */
const outcomesRuns = new Map<number, number>();
const nextRun = (jobId: number): number => {
  const run = (outcomesRuns.get(jobId) ?? 0) + 1;
  outcomesRuns.set(jobId, run);
  return run;
};

/** A file as the core takes it: by the id of the app's copy, or by its path. */
type GivenFile = OutcomesImportInput['bounces'];
type Given = { ok: true; value: GivenFile } | { ok: false; error: string };

export const createOutcomesSlice: StateCreator<AppState, [], [], OutcomesSlice> = (set, get) => {
  const setOutcomes = (jobId: number, value: OutcomesSlice['outcomes'][number]) =>
    set({ outcomes: { ...get().outcomes, [jobId]: value } });

  /** The file as the core takes it: its path (the desktop app), or its upload to the app (browser mode). */
  async function given(run: number, jobId: number, file: File): Promise<Given> {
    if (app.pathForFile) {
      const path = app.pathForFile(file);
      return path ? { ok: true, value: { path } } : { ok: false, error: 'That item is not a file on disk.' };
    }
    set({ outcomesImport: { status: 'uploading', jobId, fileName: file.name, progress: null } });
    let shown = 0;
    const staged = await app.addFile(file, {
      onProgress: (loaded, total) => {
        const current = get().outcomesImport;
        if (current.status !== 'uploading' || run !== importRun || Date.now() - shown < 100) return;
        shown = Date.now();
        set({ outcomesImport: { ...current, progress: { bytesRead: loaded, totalBytes: total } } });
      },
    });
    return staged.ok
      ? { ok: true, value: { fileId: staged.value.fileId } }
      : { ok: false, error: staged.error.message };
  }

  return {
    outcomes: {},
    outcomesImport: { status: 'idle' },
    async loadOutcomes(jobId) {
      const run = nextRun(jobId);
      if (get().outcomes[jobId]?.status !== 'ready') setOutcomes(jobId, { status: 'loading' });
      const reply = await app.getOutcomes({ jobId });
      if (outcomesRuns.get(jobId) !== run) return;
      setOutcomes(
        jobId,
        reply.ok ? { status: 'ready', value: reply.value } : { status: 'failed', error: reply.error.message },
      );
    },
    async importOutcomes(jobId, files) {
      const run = ++importRun;
      const chosen = [files.bounces, ...(files.sent ? [files.sent] : [])];
      const sources: GivenFile[] = [];
      for (const file of chosen) {
        const source = await given(run, jobId, file);
        if (run !== importRun) return;
        if (!source.ok)
          return set({ outcomesImport: { status: 'failed', jobId, error: `${file.name}: ${source.error}` } });
        sources.push(source.value);
      }
      set({ outcomesImport: { status: 'reading', jobId, fileName: files.bounces.name } });
      const reply = await app.importOutcomes({
        jobId,
        bounces: sources[0],
        ...(sources[1] ? { sent: sources[1] } : {}),
      });
      if (run !== importRun) return;
      if (!reply.ok) return set({ outcomesImport: { status: 'failed', jobId, error: reply.error.message } });
      // The new report replaces the job's earlier one, whatever a load under way answers.
      nextRun(jobId);
      set({
        outcomes: { ...get().outcomes, [jobId]: { status: 'ready', value: reply.value } },
        outcomesImport: { status: 'done', jobId },
      });
    },
  };
};
