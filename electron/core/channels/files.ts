// Files: the lists the user opened (staged by reference or copied into the staging folder), recent files,
// inspection for the column mapper, and the pre-check before a job starts.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { StagedFile } from '../../../shared/desktop/contract.js';
import { createFileChecks, type FileChecks } from '../files/analysis.js';
import { notAListFile } from '../../../shared/fileName.js';
import { inspectFile } from '../files/inspect.js';
import { formatOf } from '../files/source.js';
import { getPreset, recentFiles, touchRecentFile } from '../history/db.js';
import { ReplyFailure, type CoreBase, type CoreContext, type Handlers } from './context.js';

/** The pre-check and upload preparation load the verification engine: also on first use. */
export const preparation = () => import('../files/prepare.js');

export interface StagedList {
  readonly path: string;
  readonly name: string;
  readonly size: number;
  /** An .xlsx list: the sheet read (the first when absent), and the workbook's sheets once read. */
  readonly sheet?: string;
  sheets?: readonly string[];
  /** An .xlsx list: where the sheet's CSV is kept once read whole (files/source.ts). */
  readonly sheetCopyDir?: string;
}

export interface Staging {
  /** A file the user picked: staged by reference (Electron, recent files) … */
  readonly addPath: (path: string) => StagedFile;
  /** … or copied into the staging folder first (browser mode uploads). */
  readonly stagingPathFor: (name: string) => { fileId: string; path: string };
  readonly registerStaged: (fileId: string, path: string, name: string) => StagedFile;
  /** The same file read at another sheet of its workbook, under a file id of its own (own pre-checks). */
  readonly stageSheet: (fileId: string, sheet: string) => string;
  /** The staged file, still where it was, or a failure that says to add it again. */
  readonly stagedOrFail: (fileId: string) => StagedList;
  /** Counts and pre-checks of staged files, off-thread, with progress and cancel. */
  readonly checks: FileChecks;
}

export function createStaging({ db, stagingDir, emit }: CoreBase): Staging {
  const staged = new Map<string, StagedList>();
  // The CSV of an .xlsx list's sheet, kept for the mapper, pre-check and upload after the first whole read.
  const sheetCopies = (name: string) =>
    formatOf(name) === 'xlsx' ? { sheetCopyDir: join(stagingDir, 'sheets') } : {};
  const checks = createFileChecks((progress) => emit('files:progress', progress));
  const staging: Staging = {
    checks,
    addPath(path) {
      let size: number;
      try {
        const stat = statSync(path);
        if (!stat.isFile()) throw new ReplyFailure('file-unreadable', `“${basename(path)}” is not a file.`);
        size = stat.size;
      } catch (error) {
        if (error instanceof ReplyFailure) throw error;
        throw new ReplyFailure('file-unreadable', `“${basename(path)}” cannot be read.`);
      }
      const name = basename(path);
      if (!formatOf(name)) throw new ReplyFailure('file-unreadable', notAListFile(name));
      touchRecentFile(db, { path, name, size });
      return staging.registerStaged(randomUUID(), path, name);
    },
    stagingPathFor(name) {
      const fileId = randomUUID();
      const dir = join(stagingDir, fileId);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const safe = basename(name).replace(/[^\w.\- ()+]/g, '_') || 'list.csv';
      return { fileId, path: join(dir, safe) };
    },
    registerStaged(fileId, path, name) {
      const size = statSync(path).size;
      staged.set(fileId, { path, name, size, ...sheetCopies(name) });
      checks.warm();
      return { fileId, name, size };
    },
    stageSheet(fileId, sheet) {
      const file = staging.stagedOrFail(fileId);
      if ((file.sheet ?? file.sheets?.[0]) === sheet) return fileId;
      const id = randomUUID();
      staged.set(id, { ...file, sheet });
      return id;
    },
    stagedOrFail(fileId) {
      const file = staged.get(fileId);
      if (!file) throw new ReplyFailure('not-found', 'That file is no longer open: add it again.');
      if (!existsSync(file.path))
        throw new ReplyFailure('file-unreadable', `“${file.name}” is no longer where it was: add it again.`);
      return file;
    },
  };
  return staging;
}

/** The sheets of a staged workbook, or a failure in words for one that cannot be read. */
async function workbookSheets(file: StagedList): Promise<readonly string[]> {
  // The workbook reader (yauzl, exceljs) is loaded by the first workbook, not with the app.
  const { sheetNames, SheetProblem } = await import('../files/xlsx.js');
  try {
    return await sheetNames(file.path, file.name);
  } catch (error) {
    if (error instanceof SheetProblem) throw new ReplyFailure('file-unreadable', error.message);
    throw error;
  }
}

export type FilesChannel =
  'files:add-path' | 'files:list-recent' | 'files:inspect' | 'files:precheck' | 'files:cancel';

export function fileHandlers(ctx: CoreContext): Handlers<FilesChannel> {
  const { db, staging } = ctx;
  const { stagedOrFail } = staging;
  return {
    'files:add-path': (input) => staging.addPath(input.path),
    'files:list-recent': () => recentFiles(db),
    'files:inspect': async (input) => {
      // xlsx sheet picker: the workbook's sheets, read once; a chosen sheet is a file id of its own.
      const first = stagedOrFail(input.fileId);
      if (formatOf(first.name) === 'xlsx' && !first.sheets) first.sheets = await workbookSheets(first);
      if (input.sheet !== undefined && !first.sheets?.includes(input.sheet))
        throw new ReplyFailure('invalid-input', `“${first.name}” has no sheet named “${input.sheet}”.`);
      const fileId = input.sheet === undefined ? input.fileId : staging.stageSheet(input.fileId, input.sheet);
      const file = stagedOrFail(fileId);
      return inspectFile({
        fileId,
        ...file,
        ...(input.delimiter !== undefined ? { delimiter: input.delimiter } : {}),
        ...(input.header !== undefined ? { header: input.header } : {}),
        // The mapper shows from the sample; the pre-check (off-thread) brings the exact count.
        isCountExact: false,
        presetFor: (signature) => getPreset(db, signature),
      });
    },
    'files:precheck': async (input) => {
      const file = stagedOrFail(input.fileId);
      if (input.mapping.roles.length === 0) throw new ReplyFailure('invalid-input', 'No columns.');
      return staging.checks.precheck(input.fileId, file, input.mapping, input.split);
    },
    'files:cancel': (input) => ({ cancelled: staging.checks.cancel(input.fileId) }),
  };
}
