// The checkpoints of a `mailsieve clean` job, in a state file beside its output: `<list file>.mailsieve-job.json`
// in the output folder. It names the list the service is working on, so a clean that was interrupted (a kill,
// a crash, a lost connection) and is run again follows that list — or fetches its finished results — instead
// of submitting the file again. It holds what identifies the run (the file's path, size and time, E7's
// parameters, the service) and is used only by a run that matches; it is removed once the results are saved
// or the list ended without results. Written whole (outputs.ts), never torn.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { MAX_FILE_NAME_BYTES, shortenFileName } from '../../../shared/fileName.js';
import type { ListResource, SubmitListParams } from '../../../shared/api/list.js';
import type { CheckpointPort, JobCheckpoint, WaitingStep } from './engine.js';
import { writeFileWhole } from './outputs.js';

export const STATE_FILE_SUFFIX = '.mailsieve-job.json';

interface StateDocument {
  readonly run: string;
  readonly listId: number;
  readonly isPurchased: boolean;
  /** Where the list was at the last checkpoint, for a person reading the file. */
  readonly stage: 'processing' | 'awaiting-purchase' | 'downloading';
}

/** The state file of a clean of `file` into `outDir`. */
export function stateFilePath(outDir: string, file: string): string {
  // Shortened so that a 249-character list name still leaves room for the suffixes.
  // Room for the suffix and the temporary name it is written under (`.<pid>.mailsieve-part`).
  const name = shortenFileName(basename(file), MAX_FILE_NAME_BYTES - STATE_FILE_SUFFIX.length - 32);
  return join(outDir, `${name}${STATE_FILE_SUFFIX}`);
}

export class JobStateFile implements CheckpointPort {
  private state: StateDocument | undefined;
  private readonly run: string;

  /**
   * `service`: where the list lives (the base URL of a provider, or the embedded service's data folder), for
   * a list id means something only there.
   */
  constructor(
    readonly path: string,
    file: string,
    params: SubmitListParams,
    service: string,
  ) {
    const { size, mtimeMs } = statSync(file);
    this.run = JSON.stringify({ file, size, mtimeMs, params, service });
  }

  /** The checkpoint a matching earlier run left, or a fresh start. */
  load(): JobCheckpoint & { readonly stage?: StateDocument['stage'] } {
    try {
      const stored = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<StateDocument>;
      if (stored.run === this.run && typeof stored.listId === 'number') {
        this.state = stored as StateDocument;
        return { listId: stored.listId, isPurchased: stored.isPurchased === true, stage: stored.stage };
      }
    } catch {
      // No state file (or not one of ours): a fresh start.
    }
    return { listId: null, isPurchased: false };
  }

  private save(patch: Partial<Omit<StateDocument, 'run'>>): void {
    const next = { ...this.state, ...patch, run: this.run } as StateDocument;
    writeFileWhole(this.path, `${JSON.stringify(next, null, 2)}\n`);
    this.state = next;
  }

  /** The list ended without results, or they are saved: the next run starts afresh. */
  remove(): void {
    rmSync(this.path, { force: true });
    this.state = undefined;
  }

  uploading(): void {}
  submitted(listId: number): void {
    this.save({ listId, isPurchased: false, stage: 'processing' });
  }
  followed(_list: ListResource): void {}
  waiting(_message: string, _step: WaitingStep): void {}
  awaitingPurchase(_list: ListResource): void {
    this.save({ stage: 'awaiting-purchase' });
  }
  purchased(): void {
    this.save({ isPurchased: true, stage: 'processing' });
  }
  downloading(_list: ListResource): void {
    this.save({ stage: 'downloading' });
  }
  completed(): void {
    this.remove();
  }
}
