import { useEffect, useRef } from 'react';
import { LIST_FILE_ACCEPT } from '../shared/desktop/constants.js';
import { handleShortcut } from './commands.js';
import { Sidebar } from './components/Sidebar.js';
import { focusHeading } from './focus.js';
import { NoticeBar } from './components/NoticeBar.js';
import { ConnectionScreen } from './screens/ConnectionScreen.js';
import { HistoryScreen } from './screens/HistoryScreen.js';
import { JobScreen } from './screens/JobScreen.js';
import { LookupScreen } from './screens/LookupScreen.js';
import { NewJobScreen } from './screens/NewJobScreen.js';
import { SummaryScreen } from './screens/SummaryScreen.js';
import { VerifyScreen } from './screens/VerifyScreen.js';
import { useAppStore } from './store/index.js';

function CurrentScreen() {
  const screen = useAppStore((state) => state.screen);
  switch (screen.name) {
    case 'new':
      return <NewJobScreen />;
    case 'job':
      return <JobScreen jobId={screen.jobId} />;
    case 'summary':
      return <SummaryScreen jobId={screen.jobId} />;
    case 'history':
      return <HistoryScreen />;
    case 'verify':
      return <VerifyScreen />;
    case 'lookup':
      return <LookupScreen />;
    case 'connection':
      return <ConnectionScreen />;
  }
}

/** The file picker Ctrl+O opens on every screen (browser mode; Electron shows its native dialog). */
function OpenListInput() {
  const addFile = useAppStore((state) => state.addFile);
  return (
    <input
      id="open-list-input"
      type="file"
      accept={LIST_FILE_ACCEPT}
      className="visually-hidden"
      tabIndex={-1}
      aria-hidden="true"
      onChange={(event) => {
        const file = event.target.files?.[0];
        event.target.value = '';
        if (file) void addFile(file);
      }}
    />
  );
}

export function App() {
  const appState = useAppStore((state) => state.appState);
  const startupError = useAppStore((state) => state.startupError);
  const screen = useAppStore((state) => state.screen);
  const screenKey =
    screen.name === 'job' || screen.name === 'summary' ? `${screen.name}-${screen.jobId}` : screen.name;
  const shownKey = useRef<string | null>(null);

  // After a change of screen, focus goes to its heading (not at the first render).
  useEffect(() => {
    if (appState !== 'ready') return;
    if (shownKey.current !== null && shownKey.current !== screenKey) focusHeading();
    shownKey.current = screenKey;
  }, [screenKey, appState]);

  useEffect(() => {
    const root = document.getElementById('root');
    root?.setAttribute('data-app-state', appState);
  }, [appState]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      handleShortcut(event, useAppStore.getState());
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  if (appState === 'failed')
    return (
      <main className="startup-error">
        <h1>Mailsieve could not start</h1>
        <p role="alert">{startupError}</p>
      </main>
    );
  return (
    <div className="shell" aria-busy={appState === 'loading'}>
      <Sidebar />
      <main className="content" id="main">
        {appState === 'loading' ? <p className="muted">Starting…</p> : <CurrentScreen />}
      </main>
      <NoticeBar />
      <OpenListInput />
    </div>
  );
}
