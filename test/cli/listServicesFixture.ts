// Reference data and helpers shared by the CLI tests of the list services (clean.services.test.ts,
// purchase.test.ts): a small people file imported with the real `mailsieve data import`, and results read
// back with papaparse.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Papa from 'papaparse';
import { expect } from 'vitest';
import { VALIDATION_COLUMNS } from '../../shared/api/listServices.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

export const VALIDATION: readonly string[] = VALIDATION_COLUMNS;

/** Two people of one household at 1 Main St (Ann has a second address and interests), and one elsewhere. */
export const PEOPLE = `person id,email,email 2,first name,last name,street,city,state,zip,household id,age,gender,interests
p1,ann.lee@example.com,ann.alt@example.net,Ann,Lee,1 Main St,Springfield,IL,62701-1234,h1,35-44,Female,travel;pets
p2,bob.lee@example.com,,Bob,Lee,1 Main St,Springfield,IL,62701-1234,h1,45-54,Male,
p3,cat.kim@example.org,,Cat,Kim,9 Oak Ave,Albany,NY,12201-0001,h2,25-34,,
`;

/** A results file as rows of fields (header first). */
export function readRows(path: string, delimiter = ','): string[][] {
  return Papa.parse<string[]>(readFileSync(path, 'utf8').replace(/^\uFEFF/, ''), {
    delimiter,
    skipEmptyLines: true,
  }).data;
}

/**
 * A temporary folder with PEOPLE imported into its service data folder `svc`, and `leads` written to
 * `leads.csv`; `cleanups` gets its removal.
 */
export async function seededFolder(
  prefix: string,
  leads: string,
  cleanups: (() => void)[],
): Promise<{ dir: string; svc: string; leads: string }> {
  const dir = tempDir(prefix);
  cleanups.push(() => dir.remove());
  const svc = join(dir.path, 'svc');
  writeFileSync(join(dir.path, 'people.csv'), PEOPLE);
  const imported = await runCli([
    'data',
    'import',
    'people',
    join(dir.path, 'people.csv'),
    '--data-dir',
    svc,
  ]);
  expect(imported.code, imported.stderr).toBe(0);
  const leadsFile = join(dir.path, 'leads.csv');
  writeFileSync(leadsFile, leads);
  return { dir: dir.path, svc, leads: leadsFile };
}
