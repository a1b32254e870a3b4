// Names of a list's files: its folder under the data folder, and the results' name as the spec patterns it.
import { join } from 'node:path';
import { fitBytes, MAX_FILE_NAME_BYTES } from '../../shared/fileName.js';

/** The spec's service word in result file names (`<list name>-<list_id>-Service.<extension>`). */
export const RESULTS_SERVICE_WORD = 'Validation';

export function listsRoot(dataDir: string): string {
  return join(dataDir, 'lists');
}

export function listDir(dataDir: string, listId: number): string {
  return join(listsRoot(dataDir), String(listId));
}

/** `myfile.csv`, list 7 → `myfile-7-Validation.csv`; a name without an extension keeps none. */
export function resultsFileName(name: string, listId: number): string {
  const match = /^(.*?)(\.[^./\\]+)?$/.exec(name);
  const stem = match?.[1] || 'list';
  const extension = match?.[2] ?? '';
  const suffix = `-${listId}-${RESULTS_SERVICE_WORD}${extension.toLowerCase()}`;
  // A name of up to 255 bytes (E7) leaves the suffix no room: its stem is cut to fit.
  return `${fitBytes(stem, MAX_FILE_NAME_BYTES - new TextEncoder().encode(suffix).length)}${suffix}`;
}
