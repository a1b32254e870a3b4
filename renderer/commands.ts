// Commands as objects, shared by the sidebar, keyboard shortcuts and (under Electron) the menu: each has a
// name, a label, a shortcut test, a predicate saying when it applies, and what it performs.
import type { AppState } from './store/types.js';

export interface Command {
  readonly name: string;
  readonly label: string;
  /** Shown beside the label. */
  readonly shortcut?: string;
  readonly keyTest?: (event: KeyboardEvent) => boolean;
  readonly predicate?: (state: AppState) => boolean;
  readonly perform: (state: AppState) => void;
  /** The screen the command shows (for aria-current). */
  readonly screen?: AppState['screen']['name'];
}

const mod = (event: KeyboardEvent) => (event.ctrlKey || event.metaKey) && !event.altKey;

export const COMMANDS: readonly Command[] = [
  {
    name: 'new-job',
    label: 'New job',
    shortcut: 'Ctrl+N',
    keyTest: (event) => mod(event) && event.key.toLowerCase() === 'n',
    perform: (state) => state.navigate({ name: 'new' }),
    screen: 'new',
  },
  {
    name: 'history',
    label: 'History',
    shortcut: 'Ctrl+H',
    keyTest: (event) => mod(event) && event.key.toLowerCase() === 'h',
    perform: (state) => state.navigate({ name: 'history' }),
    screen: 'history',
  },
  {
    name: 'verify',
    label: 'Verify an address',
    shortcut: 'Ctrl+E',
    keyTest: (event) => mod(event) && event.key.toLowerCase() === 'e',
    perform: (state) => state.navigate({ name: 'verify' }),
    screen: 'verify',
  },
  {
    name: 'lookup',
    label: 'Look up a person',
    shortcut: 'Ctrl+L',
    keyTest: (event) => mod(event) && event.key.toLowerCase() === 'l',
    perform: (state) => state.navigate({ name: 'lookup' }),
    screen: 'lookup',
  },
  {
    name: 'connection',
    label: 'Connection',
    shortcut: 'Ctrl+K',
    keyTest: (event) => mod(event) && event.key.toLowerCase() === 'k',
    perform: (state) => state.navigate({ name: 'connection' }),
    screen: 'connection',
  },
];

/** Open a list: the native dialog in Electron; browser mode clicks the page's file input instead. */
export const OPEN_LIST_COMMAND: Command = {
  name: 'open-list',
  label: 'Open list…',
  shortcut: 'Ctrl+O',
  keyTest: (event) => mod(event) && event.key.toLowerCase() === 'o',
  predicate: (state) => state.appState === 'ready',
  perform: (state) => {
    // The picker opens over the screen shown; the file chosen opens on New job.
    if (state.appInfo?.hasNativeDialogs) void state.openListDialog();
    else document.getElementById('open-list-input')?.click();
  },
};

export function handleShortcut(event: KeyboardEvent, state: AppState): boolean {
  for (const command of [OPEN_LIST_COMMAND, ...COMMANDS]) {
    if (command.keyTest?.(event) && (command.predicate?.(state) ?? true)) {
      event.preventDefault();
      command.perform(state);
      return true;
    }
  }
  return false;
}
