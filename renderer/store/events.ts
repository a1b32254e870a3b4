// Core events, wired once: progress into the jobs slice, changed rows into the views that show them.
import { app, onAppLink } from '../platform/app.js';
import { useAppStore } from './index.js';

let historyTimer: ReturnType<typeof setTimeout> | undefined;
let activityTimer: ReturnType<typeof setTimeout> | undefined;

export function wireEvents(): () => void {
  const store = useAppStore;
  const offs = [
    app.on('job:progress', (progress) => store.getState().setProgress(progress)),
    app.on('connection:changed', (info) => store.getState().setConnectionInfo(info)),
    app.on('files:opened', (file) => void store.getState().openStaged(file)),
    app.on('files:progress', (progress) => store.getState().setFileProgress(progress)),
    app.on('people:import-progress', (progress) => store.getState().setReferenceImportProgress(progress)),
    app.on('jobs:changed', ({ jobIds }) => {
      const state = store.getState();
      for (const id of jobIds) if (state.jobs[id]) void state.loadJob(id);
      if (!activityTimer)
        activityTimer = setTimeout(() => {
          activityTimer = undefined;
          void store.getState().loadActivity();
        }, 250);
      // History refreshes from the event instead of polling; bursts of changes coalesce.
      if (state.screen.name === 'history' && !historyTimer)
        historyTimer = setTimeout(() => {
          historyTimer = undefined;
          void store.getState().loadHistory();
        }, 250);
    }),
  ];
  onAppLink((isUp) => {
    store.getState().setAppLinked(isUp);
    // Back after a restart: what the core says now.
    if (isUp)
      void app.getConnection().then((reply) => reply.ok && store.getState().setConnectionInfo(reply.value));
  });
  return () => offs.forEach((off) => off());
}
