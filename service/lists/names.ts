// Names of a list's files: its folder under the data folder, and the results' name as the spec patterns it.
import { join } from 'node:path';
import type { ListServiceKey } from '../../shared/api/list.js';
import { fitBytes, MAX_FILE_NAME_BYTES } from '../../shared/fileName.js';

/**
 * The spec's `Service` word in result file names (`<list name>-<list_id>-Service.<extension>`), per list
 * service: `Validation` when validation ran, otherwise the first service run.
 */
const RESULTS_SERVICE_WORDS: Record<ListServiceKey, string> = {
  email_validation: 'Validation',
  email_intelligence: 'Intelligence',
  email_append: 'EmailAppend',
  alternate_email_append: 'AlternateEmail',
};

/** The word for the services a list ran (validation first, else the first of them). */
export function resultsServiceWord(services: readonly ListServiceKey[]): string {
  const service = services.includes('email_validation') ? 'email_validation' : services[0];
  return service ? RESULTS_SERVICE_WORDS[service] : RESULTS_SERVICE_WORDS.email_validation;
}

export function listsRoot(dataDir: string): string {
  return join(dataDir, 'lists');
}

export function listDir(dataDir: string, listId: number): string {
  return join(listsRoot(dataDir), String(listId));
}

/**
 * `myfile.csv`, list 7, validation → `myfile-7-Validation.csv`; intelligence only → `myfile-7-Intelligence.csv`.
 * A name without an extension keeps none.
 */
export function resultsFileName(name: string, listId: number, services: readonly ListServiceKey[]): string {
  const match = /^(.*?)(\.[^./\\]+)?$/.exec(name);
  const stem = match?.[1] || 'list';
  const extension = match?.[2] ?? '';
  const suffix = `-${listId}-${resultsServiceWord(services)}${extension.toLowerCase()}`;
  // A name of up to 255 bytes (E7) leaves the suffix no room: its stem is cut to fit.
  return `${fitBytes(stem, MAX_FILE_NAME_BYTES - new TextEncoder().encode(suffix).length)}${suffix}`;
}
