import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The app home (DESIGN.md "Data on disk"): MAILSIEVE_HOME when set, else the OS app-data folder, the same
 * one Electron's `app.getPath('userData')` gives for our product name.
 */
export function appHome(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.MAILSIEVE_HOME) return env.MAILSIEVE_HOME;
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Mailsieve');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Mailsieve');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'Mailsieve');
}

/** Where the embedded service keeps its database and lists. */
export function serviceDataDir(home = appHome()): string {
  return join(home, 'service');
}
