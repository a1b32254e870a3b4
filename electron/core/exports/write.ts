// Shaped exports written from a results file's rows: each target selects rows by status (the export kind),
// shapes them for import (shape.ts) and writes them in its format (formats.ts); the zip of every status
// writes one file per status into one archive. Rows arrive decoded, header first.
import { createReadStream, createWriteStream, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { Zip, ZipDeflate } from 'fflate';
import {
  EXPORT_FORMAT_EXTENSIONS,
  type ExportChoices,
  type ExportFormat,
  type LeftOut,
} from '../../../shared/exportChoices.js';
import { readRecordBatches, splitFields } from '../files/records.js';
import { decodeStream, openListSource } from '../files/source.js';
import { openRowWriter, type RowWriter } from './formats.js';
import { RowShaper, resultsLayout } from './shape.js';

export interface ShapedTarget {
  readonly path: string;
  readonly choices: ExportChoices;
  /** Whether the export takes a row of this (lower-case) status; `row` for finer selections (drill-down). */
  readonly select: (status: string, row: readonly string[]) => boolean;
  readonly sheetName?: string;
}

export interface ShapedResult {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  readonly leftOut: LeftOut;
}

/**
 * Writes every target in one pass over `rows` (header first). `emailIndex`: the list's email column,
 * 0-based. On failure no target is left behind.
 */
export async function writeShapedExports(
  rows: AsyncIterable<readonly string[]>,
  emailIndex: number,
  targets: readonly ShapedTarget[],
): Promise<ShapedResult[]> {
  const open: { target: ShapedTarget; shaper: RowShaper; writer: RowWriter }[] = [];
  let status = -1;
  try {
    for await (const row of rows) {
      if (status < 0) {
        const layout = resultsLayout(row, emailIndex);
        status = layout.status;
        for (const target of targets) {
          const shaper = new RowShaper(row, layout, target.choices);
          const writer = openRowWriter(target.path, target.choices.format, target.sheetName);
          open.push({ target, shaper, writer });
          await writer.writeRow(shaper.header);
        }
        continue;
      }
      if (row.length === 1 && row[0] === '') continue;
      const rowStatus = (row[status] ?? '').toLowerCase();
      for (const { target, shaper, writer } of open) {
        if (!target.select(rowStatus, row)) continue;
        const shaped = shaper.shape(row);
        if (shaped) await writer.writeRow(shaped);
      }
    }
    if (status < 0) throw new Error('The results file is empty.');
    const results: ShapedResult[] = [];
    for (const { target, shaper, writer } of open) {
      const { bytes } = await writer.close();
      results.push({ path: target.path, rows: shaper.written, bytes, leftOut: shaper.leftOut });
    }
    return results;
  } catch (error) {
    for (const { writer } of open) await writer.abort();
    throw error;
  }
}

/** A fixed time for the archive's entries, so the same export gives the same zip. */
const ENTRY_TIME = new Date(Date.UTC(2000, 0, 1));

/**
 * One archive with a file per status the rows hold (`valid.csv`, `invalid.csv`, …), each shaped with
 * `choices` (duplicates are removed within a status file). Answers the files it holds.
 */
export async function writeStatusZip(
  rows: AsyncIterable<readonly string[]>,
  emailIndex: number,
  destination: string,
  choices: ExportChoices,
  stem: string,
): Promise<{ bytes: number; files: { name: string; rows: number; leftOut: LeftOut }[] }> {
  const work = mkdtempSync(join(dirname(destination), '.statuses-'));
  try {
    const byStatus = new Map<string, { name: string; shaper: RowShaper; writer: RowWriter }>();
    let header: readonly string[] | undefined;
    let layout: ReturnType<typeof resultsLayout> | undefined;
    for await (const row of rows) {
      if (!layout) {
        header = row;
        layout = resultsLayout(row, emailIndex);
        continue;
      }
      if (row.length === 1 && row[0] === '') continue;
      const status = (row[layout.status] ?? '').toLowerCase() || 'none';
      let entry = byStatus.get(status);
      if (!entry) {
        const name = `${stem}-${status.replace(/[^\w-]/g, '_')}${EXPORT_FORMAT_EXTENSIONS[choices.format]}`;
        const shaper = new RowShaper(header!, layout, choices);
        const writer = openRowWriter(join(work, name), choices.format, status);
        await writer.writeRow(shaper.header);
        entry = { name, shaper, writer };
        byStatus.set(status, entry);
      }
      const shaped = entry.shaper.shape(row);
      if (shaped) await entry.writer.writeRow(shaped);
    }
    if (!layout) throw new Error('The results file is empty.');
    const files = [...byStatus.values()].sort((a, b) => a.name.localeCompare(b.name));
    for (const file of files) await file.writer.close();
    const temporary = `${destination}.${process.pid}.tmp`;
    const out = createWriteStream(temporary, { mode: 0o600 });
    const done = new Promise<void>((resolve, reject) => {
      out.once('error', reject);
      out.once('finish', resolve);
    });
    const failure: { error?: Error } = {};
    const zip = new Zip((error, data, final) => {
      if (error) failure.error = error;
      else out.write(data);
      if (final || error) out.end();
    });
    for (const file of files) {
      const entry = new ZipDeflate(file.name, { level: 6 });
      entry.mtime = ENTRY_TIME;
      zip.add(entry);
      for await (const chunk of createReadStream(join(work, file.name), { highWaterMark: 1 << 20 })) {
        entry.push(chunk as Uint8Array);
        if (out.writableNeedDrain) await once(out, 'drain');
      }
      entry.push(new Uint8Array(0), true);
    }
    zip.end();
    try {
      await done;
      if (failure.error) throw failure.error;
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
    renameSync(temporary, destination);
    return {
      bytes: statSync(destination).size,
      files: files.map((file) => ({
        name: file.name,
        rows: file.shaper.written,
        leftOut: file.shaper.leftOut,
      })),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export function extensionOf(format: ExportFormat): string {
  return EXPORT_FORMAT_EXTENSIONS[format];
}

/** The rows of a results file, decoded and split (header first), streamed. */
export async function* resultRows(
  path: string,
  delimiter: string,
  name = path,
): AsyncGenerator<readonly string[]> {
  const source = await openListSource(path, name, statSync(path).size);
  for await (const batch of readRecordBatches(decodeStream(await source.open(), 'utf-8')))
    for (const raw of batch) yield splitFields(raw, delimiter);
}
