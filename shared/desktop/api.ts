// `window.app`: what the renderer may call. One function per channel of the contract, a few operations of
// the shell (file pickers, saving an export), and `on(event, cb)` over the fixed event set. Implemented by
// electron/main/preload.ts (IPC) and by renderer/platform/webApp.ts (browser mode over loopback HTTP).
import type {
  AppEvent,
  Channel,
  ChannelInput,
  ChannelOutput,
  EventPayload,
  ExportInfo,
  ReferenceKind,
  Reply,
  StagedFile,
} from './contract.js';
import type { METHOD_OF_CHANNEL } from './methods.js';

export type ChannelMethods = {
  readonly [C in Channel as (typeof METHOD_OF_CHANNEL)[C]]: (
    ...args: Record<string, never> extends ChannelInput<C>
      ? [input?: ChannelInput<C>]
      : [input: ChannelInput<C>]
  ) => Promise<Reply<ChannelOutput<C>>>;
};

/** How a file added from the page reports its copying (browser mode uploads it) and is cancelled. */
export interface AddFileOptions {
  readonly onProgress?: (loaded: number, total: number) => void;
  readonly signal?: AbortSignal;
}

export interface ShellMethods<F> {
  /** A file the user dropped or picked in the page: read by path (Electron) or uploaded (browser mode). */
  readonly addFile: (file: F, options?: AddFileOptions) => Promise<Reply<StagedFile>>;
  /** The native open dialog; `null` when cancelled. Browser mode has none (`hasNativeDialogs` is false). */
  readonly openListDialog: () => Promise<Reply<StagedFile | null>>;
  /** Saves an export where the user says: a native save dialog, or a download in browser mode. */
  readonly saveExport: (exportInfo: ExportInfo) => Promise<Reply<{ saved: boolean; path: string | null }>>;
  /** Shows a saved file in its folder; browser mode has none (its downloads are the browser's). */
  readonly showInFolder?: (path: string) => Promise<Reply<null>>;
  /**
   * Saves the page as a PDF where the user says (Electron's printToPDF); browser mode has none and uses the
   * page's print (window.print), whose dialog saves as PDF.
   */
  readonly savePagePdf?: (fileName: string) => Promise<Reply<{ saved: boolean; path: string | null }>>;
  /**
   * The native open dialog for a people or activity file to import (Look up a person); `null` when
   * cancelled. Browser mode has none: the page uploads the file it picked with `addFile`.
   */
  readonly pickReferenceFile?: (kind: ReferenceKind) => Promise<Reply<{ path: string; name: string } | null>>;
  /**
   * Where a file the user dropped or picked in the page is on disk (Electron's webUtils), so the core reads it
   * where it is, as a campaign's bounce export is (History → a job → Campaign results); '' when it is not a
   * file on disk. Browser mode has none: the page uploads the file with `addFile`.
   */
  readonly pathForFile?: (file: F) => string;
  readonly on: <E extends AppEvent>(event: E, listener: (payload: EventPayload<E>) => void) => () => void;
}

export type DesktopApi<F = unknown> = ChannelMethods & ShellMethods<F>;
