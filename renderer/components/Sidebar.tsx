import { CHECKS_LEVEL_NAMES } from '../../shared/desktop/checks.js';
import { COMMANDS } from '../commands.js';
import { useAppStore } from '../store/index.js';

/** Jobs running now: a button to the (first) one. */
function RunningJobs() {
  const running = useAppStore((state) => state.activity.running);
  const navigate = useAppStore((state) => state.navigate);
  const first = running[0];
  return (
    <div role="status" className="running-jobs">
      {first ? (
        <button
          type="button"
          className="running-button"
          onClick={() => navigate({ name: 'job', jobId: first.id })}
        >
          <span className="running-dot" aria-hidden="true" />
          {running.length === 1 ? `1 job running: ${first.fileName}` : `${running.length} jobs running`}
        </button>
      ) : null}
    </div>
  );
}

function ConnectionBadge() {
  const connection = useAppStore((state) => state.connection);
  const isAppLinked = useAppStore((state) => state.isAppLinked);
  if (!connection) return null;
  const text = !isAppLinked
    ? 'Mailsieve has stopped: start it again'
    : connection.kind === 'provider'
      ? `Provider: ${connection.provider ? new URL(connection.provider.baseUrl).host : 'not set'}`
      : connection.embedded.state === 'running'
        ? `Local service: running${connection.embedded.level ? ` (${CHECKS_LEVEL_NAMES[connection.embedded.level]})` : ''}`
        : connection.embedded.state === 'starting'
          ? 'Local service: starting…'
          : connection.embedded.state === 'failed'
            ? 'Local service: failed to start'
            : 'Local service: stopped (starts when needed)';
  return (
    <p
      className={`connection-badge state-${!isAppLinked ? 'failed' : connection.kind === 'provider' ? 'provider' : connection.embedded.state}`}
      role="status"
      aria-label="Connection status"
    >
      {text}
    </p>
  );
}

export function Sidebar() {
  const screenName = useAppStore((state) => state.screen.name);
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">
        <svg viewBox="0 0 32 32" width="28" height="28" aria-hidden="true" className="brand-mark">
          <circle cx="16" cy="16" r="14" fill="none" stroke="currentColor" strokeWidth="2.5" />
          {[9, 16, 23].map((x) =>
            [11, 17, 23].map((y) => <circle key={`${x}-${y}`} cx={x} cy={y} r="1.8" fill="currentColor" />),
          )}
          <path d="M6 9 H26" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" />
        </svg>
        <span>Mailsieve</span>
      </div>
      <ul>
        {COMMANDS.map((command) => (
          <li key={command.name}>
            <button
              type="button"
              className="nav-button"
              aria-current={command.screen === screenName ? 'page' : undefined}
              aria-keyshortcuts={command.shortcut?.replace('Ctrl', 'Control')}
              onClick={() => command.perform(useAppStore.getState())}
            >
              <span>{command.label}</span>
              {command.shortcut ? <kbd aria-hidden="true">{command.shortcut}</kbd> : null}
            </button>
          </li>
        ))}
      </ul>
      <RunningJobs />
      <ConnectionBadge />
    </nav>
  );
}
