// `window.app` for browser mode: the desktop contract over the loopback web host (electron/web/host.ts).
// Calls are POSTs to /api/call/<channel>; events arrive as server-sent events on /api/events; a file is
// uploaded to /api/files; an export is saved as a download of /api/exports/<id>. The session cookie set at
// /launch authorises all of it.
import type { AddFileOptions, DesktopApi } from '../../shared/desktop/api.js';
import type { AppEvent, EventPayload, Reply, StagedFile } from '../../shared/desktop/contract.js';
import { EVENT_CHANNELS, METHOD_OF_CHANNEL } from '../../shared/desktop/methods.js';

const HEADERS = { 'x-mailsieve-request': '1' };

function failure(code: string, message: string): Reply<never> {
  return { ok: false, error: { code, message } };
}

async function readReply<T>(response: Response): Promise<Reply<T>> {
  try {
    return (await response.json()) as Reply<T>;
  } catch {
    return failure('invalid-response', `The app answered HTTP ${response.status} without a reply.`);
  }
}

async function post<T>(url: string, body: BodyInit, type: string): Promise<Reply<T>> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': type },
      body,
    });
    return await readReply<T>(response);
  } catch {
    return failure('disconnected', 'Mailsieve is not running: start it again with npm start.');
  }
}

/** Uploads a file with XMLHttpRequest, which (unlike fetch) reports the upload's progress. */
function upload(file: File, options: AddFileOptions = {}): Promise<Reply<StagedFile>> {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/api/files?name=${encodeURIComponent(file.name)}`);
    for (const [name, value] of Object.entries(HEADERS)) request.setRequestHeader(name, value);
    request.setRequestHeader('content-type', 'application/octet-stream');
    request.upload.onprogress = (event) => options.onProgress?.(event.loaded, event.total || file.size);
    request.onload = () => {
      try {
        resolve(JSON.parse(request.responseText) as Reply<StagedFile>);
      } catch {
        resolve(failure('invalid-response', `The app answered HTTP ${request.status} without a reply.`));
      }
    };
    request.onerror = () =>
      resolve(failure('disconnected', 'Mailsieve is not running: start it again with npm start.'));
    const cancelled = () => resolve(failure('cancelled', 'Adding the file was cancelled.'));
    request.onabort = cancelled;
    if (options.signal?.aborted) return cancelled();
    options.signal?.addEventListener('abort', () => request.abort(), { once: true });
    request.send(file);
  });
}

type Listener = (payload: unknown) => void;

export function createWebApp(): DesktopApi<File> & {
  readonly connected: Promise<void>;
  readonly onLink: (listener: (isUp: boolean) => void) => void;
} {
  const listeners = new Map<AppEvent, Set<Listener>>();
  const linkListeners = new Set<(isUp: boolean) => void>();
  const source = new EventSource('/api/events');
  let markConnected: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => (markConnected = resolve));
  source.addEventListener('ready', () => {
    markConnected();
    for (const listener of linkListeners) listener(true);
  });
  // The event stream breaks when the app stops (EventSource then retries every second).
  source.addEventListener('error', () => {
    for (const listener of linkListeners) listener(false);
  });
  for (const event of EVENT_CHANNELS) {
    source.addEventListener(event, (message: MessageEvent<string>) => {
      const payload = JSON.parse(message.data) as unknown;
      for (const listener of listeners.get(event) ?? []) listener(payload);
    });
  }

  const methods = Object.fromEntries(
    Object.entries(METHOD_OF_CHANNEL).map(([channel, method]) => [
      method,
      (input?: unknown) => post(`/api/call/${channel}`, JSON.stringify(input ?? {}), 'application/json'),
    ]),
  ) as unknown as DesktopApi<File>;

  return {
    ...methods,
    connected,
    onLink: (listener) => linkListeners.add(listener),
    addFile: (file: File, options?: AddFileOptions) => upload(file, options),
    openListDialog: () => Promise.resolve({ ok: true, value: null }),
    saveExport: (info) => {
      const link = document.createElement('a');
      link.href = `/api/exports/${info.id}`;
      link.download = info.fileName;
      link.rel = 'noopener';
      document.body.append(link);
      link.click();
      link.remove();
      return Promise.resolve({ ok: true, value: { saved: true, path: null } });
    },
    on: <E extends AppEvent>(event: E, listener: (payload: EventPayload<E>) => void) => {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      const wrapped = listener as Listener;
      set.add(wrapped);
      return () => set.delete(wrapped);
    },
  };
}
