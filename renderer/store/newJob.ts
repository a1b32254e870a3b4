import type { StateCreator } from 'zustand';
import { LIST_SERVICE_KEYS, type ListServiceKey } from '../../shared/api/listServiceNames.js';
import type { ColumnRole, Inspection, StagedFile } from '../../shared/desktop/contract.js';
import { app } from '../platform/app.js';
import type { AppState, NewJobSlice, NewJobState } from './types.js';

type Mapping = Extract<NewJobState, { status: 'mapping' }>;

/** A token per pre-check, so an answer for an older mapping is dropped. */
let precheckRun = 0;
/** Cancels the upload under way (browser mode copies the file to the app first). */
let adding: AbortController | undefined;

function mappingOf(inspection: Inspection): Pick<Mapping, 'roles' | 'split'> {
  return {
    roles: inspection.columns.map((column) => column.suggestedRole),
    // Split when over the limit: whether the file is, only its exact count says (the pre-check's, not the
    // sample's estimate); a file within it goes whole whatever this says.
    split: true,
  };
}

export const createNewJobSlice: StateCreator<AppState, [], [], NewJobSlice> = (set, get) => {
  const mapping = (): Mapping | undefined => {
    const state = get().newJob;
    return state.status === 'mapping' ? state : undefined;
  };
  const patch = (change: Partial<Mapping>) => {
    const current = mapping();
    if (current) set({ newJob: { ...current, ...change } });
  };

  async function inspect(file: StagedFile): Promise<void> {
    const reply = await app.inspectFile({ fileId: file.fileId });
    if (!reply.ok) return set({ newJob: { status: 'failed', error: reply.error.message } });
    set({
      newJob: {
        status: 'mapping',
        file,
        inspection: reply.value,
        isReinspecting: false,
        services: ['email_validation'],
        fields: null,
        reportOnly: false,
        precheck: { status: 'idle' },
        counted: null,
        start: { status: 'idle' },
        ...mappingOf(reply.value),
      },
    });
    void get().runPrecheck();
    // The services offered follow the connection: ask again whenever a list is opened.
    void get().loadAllowedServices();
  }

  return {
    newJob: { status: 'empty' },
    async addFile(file) {
      get().navigate({ name: 'new' });
      adding?.abort();
      const controller = (adding = new AbortController());
      set({ newJob: { status: 'adding', name: file.name, progress: null } });
      let shown = 0;
      const reply = await app.addFile(file, {
        signal: controller.signal,
        onProgress: (loaded, total) => {
          const current = get().newJob;
          // A repaint per tenth of a second is plenty.
          if (current.status !== 'adding' || adding !== controller || Date.now() - shown < 100) return;
          shown = Date.now();
          set({ newJob: { ...current, progress: { bytesRead: loaded, totalBytes: total, rows: 0 } } });
        },
      });
      if (adding !== controller) return;
      adding = undefined;
      if (!reply.ok) {
        if (reply.error.code === 'cancelled') {
          set({ newJob: { status: 'empty' } });
          return get().notify(`Adding ${file.name} was cancelled.`);
        }
        return set({ newJob: { status: 'failed', error: reply.error.message } });
      }
      await inspect(reply.value);
    },
    async openListDialog() {
      const reply = await app.openListDialog();
      if (!reply.ok) return set({ newJob: { status: 'failed', error: reply.error.message } });
      if (reply.value) await get().openStaged(reply.value);
    },
    async openStaged(file) {
      get().navigate({ name: 'new' });
      set({ newJob: { status: 'adding', name: file.name, progress: null } });
      await inspect(file);
    },
    async openRecent(path) {
      const reply = await app.addPath({ path });
      if (!reply.ok) return set({ newJob: { status: 'failed', error: reply.error.message } });
      await get().openStaged(reply.value);
    },
    async reinspect(change) {
      const current = mapping();
      if (!current) return;
      // The controls show the choice at once; the new reading of the file follows.
      patch({ isReinspecting: true, inspection: { ...current.inspection, ...change } });
      // Another sheet of a workbook is read afresh (its own layout), under the file id the answer gives.
      const reply = await app.inspectFile(
        change.sheet !== undefined
          ? { fileId: current.file.fileId, sheet: change.sheet }
          : {
              fileId: current.file.fileId,
              header: change.header ?? current.inspection.header,
              delimiter: change.delimiter ?? current.inspection.delimiter,
            },
      );
      const now = mapping();
      if (!now) return;
      if (!reply.ok) {
        patch({ isReinspecting: false, inspection: current.inspection });
        return get().notify(reply.error.message, 'error');
      }
      set({
        newJob: {
          ...now,
          file: { ...now.file, fileId: reply.value.fileId },
          inspection: reply.value,
          isReinspecting: false,
          counted: null,
          ...mappingOf(reply.value),
          // Another sheet starts afresh; the same one keeps the split choice.
          ...(change.sheet === undefined ? { split: now.split } : {}),
          ...(change.sheet !== undefined ? { precheck: { status: 'idle' as const } } : {}),
        },
      });
      void get().runPrecheck();
    },
    setRole(column, role) {
      const current = mapping();
      if (!current) return;
      const wasEmail = current.roles.indexOf('email');
      // One email column: choosing another demotes the old one.
      const roles: ColumnRole[] = current.roles.map((r, i) =>
        i === column ? role : role === 'email' && r === 'email' ? 'ignore' : r,
      );
      patch({ roles });
      if (roles.indexOf('email') !== wasEmail) void get().runPrecheck();
    },
    setReportOnly(value) {
      patch({ reportOnly: value });
    },
    setService(service, isChosen) {
      const current = mapping();
      if (!current) return;
      const chosen = new Set<ListServiceKey>(current.services);
      if (isChosen) chosen.add(service);
      else chosen.delete(service);
      patch({ services: LIST_SERVICE_KEYS.filter((key) => chosen.has(key)) });
    },
    setFields(fields) {
      patch({ fields: fields === null ? null : [...fields] });
    },
    keepAllowedServices(allowed) {
      const current = mapping();
      if (!current) return;
      const services = current.services.filter((service) => allowed.includes(service));
      if (services.length !== current.services.length)
        patch({ services: services.length > 0 ? services : allowed.slice(0, 1) });
    },
    setSplit(value) {
      patch({ split: value });
      void get().runPrecheck();
    },
    async runPrecheck() {
      const current = mapping();
      if (!current) return;
      if (current.roles.filter((role) => role === 'email').length > 1)
        return patch({ precheck: { status: 'idle' } });
      const run = ++precheckRun;
      patch({ precheck: { status: 'loading', progress: null } });
      const reply = await app.precheckFile({
        fileId: current.file.fileId,
        mapping: {
          delimiter: current.inspection.delimiter,
          header: current.inspection.header,
          roles: [...current.roles],
        },
        split: current.split,
      });
      if (run !== precheckRun) return;
      patch({
        precheck: reply.ok
          ? { status: 'ready', value: reply.value }
          : reply.error.code === 'cancelled'
            ? { status: 'cancelled' }
            : { status: 'failed', error: reply.error.message },
        ...(reply.ok ? { counted: { rowsToSend: reply.value.rowsToSend, blank: reply.value.blank } } : {}),
      });
    },
    setFileProgress(progress) {
      const current = mapping();
      if (current?.file.fileId !== progress.fileId || current.precheck.status !== 'loading') return;
      const { fileId: _fileId, ...figures } = progress;
      patch({ precheck: { status: 'loading', progress: figures } });
    },
    async cancelFileWork() {
      const state = get().newJob;
      if (state.status === 'adding') {
        adding?.abort();
        return;
      }
      const current = mapping();
      if (current?.precheck.status !== 'loading') return;
      precheckRun++;
      patch({ precheck: { status: 'cancelled' } });
      await app.cancelFileCheck({ fileId: current.file.fileId });
    },
    async startCleaning() {
      const current = mapping();
      if (!current || current.start.status === 'starting') return;
      patch({ start: { status: 'starting' } });
      const reply = await app.startJob({
        fileId: current.file.fileId,
        mapping: {
          delimiter: current.inspection.delimiter,
          header: current.inspection.header,
          roles: [...current.roles],
        },
        options: {
          // Validation is not subject to the report option: it matters only beside another service.
          reportOnly:
            current.reportOnly && current.services.some((service) => service !== 'email_validation'),
          split: current.split,
          services: [...current.services],
          ...(current.fields !== null && current.services.includes('email_intelligence')
            ? { fields: [...current.fields] }
            : {}),
        },
      });
      if (!reply.ok) return patch({ start: { status: 'failed', error: reply.error.message } });
      set({ newJob: { status: 'empty' } });
      const [first] = reply.value.jobIds;
      if (reply.value.jobIds.length > 1)
        get().notify(`The file was split into ${reply.value.jobIds.length} jobs; History lists every part.`);
      if (first !== undefined) get().navigate({ name: 'job', jobId: first });
    },
    resetNewJob() {
      const current = mapping();
      if (current?.precheck.status === 'loading') void app.cancelFileCheck({ fileId: current.file.fileId });
      set({ newJob: { status: 'empty' } });
    },
  };
};
