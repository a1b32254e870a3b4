// Before any end-to-end file: is there a browser to drive? Without one, the run stops here with one line that
// says how to install one (and a non-zero exit), rather than a stack trace from every file that launches it.
// (Thrown, the error would come with vitest's misleading "No test files found"; hence the exit.)
import { findBrowser, noBrowserMessage } from '../../electron/web/findBrowser.js';

export default function setup(): void {
  if (findBrowser()) return;
  process.stderr.write(`\nEnd-to-end tests cannot run. ${noBrowserMessage()}\n`);
  process.exit(1);
}
