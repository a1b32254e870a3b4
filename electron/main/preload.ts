// The preload: `window.app`, one function per operation of the desktop contract, two shell operations (the
// native open and save dialogs), `addFile` (a dropped or picked file is read by path, via webUtils), and
// `on(event, cb)` over the fixed event set. No generic invoke, no process.env, no key getter. Bundled into
// one CommonJS script (build/vite.preload.config.js): a sandboxed preload can require only 'electron'.
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import {
  EVENT_CHANNELS,
  EVENT_IPC_CHANNEL,
  METHOD_OF_CHANNEL,
  SHELL_CHANNELS,
} from '../../shared/desktop/methods.js';

type Listener = (payload: unknown) => void;
const listeners = new Map<string, Set<Listener>>();

ipcRenderer.on(EVENT_IPC_CHANNEL, (_event: IpcRendererEvent, name: unknown, payload: unknown) => {
  if (typeof name !== 'string') return;
  for (const listener of listeners.get(name) ?? []) listener(payload);
});

const api: Record<string, unknown> = {};
// Each method is bound to its own fixed channel: the page can call these operations and nothing else.
for (const [channel, method] of Object.entries(METHOD_OF_CHANNEL)) {
  api[method] = (input?: unknown) => ipcRenderer.invoke(channel, input ?? {});
}

api.addFile = (file: File) => {
  const path = webUtils.getPathForFile(file);
  if (!path)
    return Promise.resolve({
      ok: false,
      error: { code: 'file-unreadable', message: 'That item is not a file on disk.' },
    });
  return ipcRenderer.invoke('files:add-path', { path });
};
api.openListDialog = () => ipcRenderer.invoke(SHELL_CHANNELS.openListDialog);
api.saveExport = (info: { id: number }) =>
  ipcRenderer.invoke(SHELL_CHANNELS.saveExportDialog, { exportId: info.id });
api.showInFolder = (path: string) => ipcRenderer.invoke(SHELL_CHANNELS.showInFolder, { path });
api.pickReferenceFile = (kind: string) => ipcRenderer.invoke(SHELL_CHANNELS.pickReferenceFile, { kind });
// Campaign results (issue 37): the bounce export and sent list are read where they are, not staged as lists.
api.pathForFile = (file: File) => webUtils.getPathForFile(file);
api.savePagePdf = (fileName: string) => ipcRenderer.invoke(SHELL_CHANNELS.savePagePdf, { fileName });
api.on = (event: string, listener: Listener) => {
  if (!(EVENT_CHANNELS as readonly string[]).includes(event)) throw new Error(`Unknown event: ${event}`);
  let set = listeners.get(event);
  if (!set) listeners.set(event, (set = new Set()));
  set.add(listener);
  return () => {
    set.delete(listener);
  };
};

contextBridge.exposeInMainWorld('app', api);
