// Reading a list file as the service will: a .csv/.txt as it is, a .zip by its one file. Text is decoded by
// the encoding seen at the start (a byte-order mark, else UTF-8 when it decodes, else Windows-1252).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { ZipEntryInfo } from '../../../service/lists/read/zip.js';
import { notAListFile } from '../../../shared/fileName.js';
import type { ENCODINGS } from '../../../shared/desktop/contract.js';

export type Encoding = (typeof ENCODINGS)[number];
export type FileFormat = 'csv' | 'txt' | 'zip' | 'xlsx';

export function formatOf(name: string): FileFormat | undefined {
  const match = /\.(csv|txt|zip|xlsx)$/i.exec(name);
  return match ? (match[1].toLowerCase() as FileFormat) : undefined;
}

export class FileProblem extends Error {
  readonly code = 'file-unreadable';
}

export interface ListSource {
  readonly format: FileFormat;
  /** The name of the text file: the file itself, or the one file inside a zip. */
  readonly textName: string;
  /** Bytes of text (a zip's uncompressed size). */
  readonly textSize: number;
  /** A fresh stream of the text's bytes. */
  open(): Promise<Readable>;
}

/** Where to read an .xlsx list from: its sheet, and a folder to keep the sheet's CSV in once converted. */
export interface SheetOptions {
  /** The sheet (the first visible one when absent). */
  readonly sheet?: string;
  /**
   * The first whole read of the sheet keeps its CSV here, and later reads of the same workbook (same path,
   * size and modification time) and sheet read that copy instead of the workbook: the desktop's sample,
   * pre-check and upload each read the list, and a large sheet takes exceljs seconds per 100,000 rows.
   */
  readonly sheetCopyDir?: string;
}

/** The CSV copy of a workbook's sheet in `dir`, named by what it was made from. */
function sheetCopyPath(dir: string, path: string, sheet: string | undefined): string {
  const stat = statSync(path);
  const key = JSON.stringify([path, sheet ?? null, stat.size, stat.mtimeMs]);
  return join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.csv`);
}

/**
 * The text inside a list file; a zip must hold exactly one .csv or .txt file; an .xlsx workbook reads as the
 * CSV of its first visible sheet, or of `options.sheet`. The workbook reader (yauzl, exceljs) and the zip
 * reader (fflate) are loaded by the first such file, not with the app.
 */
export async function openListSource(
  path: string,
  name: string,
  size: number,
  options: SheetOptions = {},
): Promise<ListSource> {
  const format = formatOf(name);
  if (!format) throw new FileProblem(notAListFile(name));
  if (format === 'xlsx') {
    const { sheet, sheetCopyDir } = options;
    const copy = sheetCopyDir ? sheetCopyPath(sheetCopyDir, path, sheet) : undefined;
    return {
      format,
      textName: name.replace(/\.xlsx$/i, '.csv'),
      // Unknown until converted; the compressed size is a floor.
      textSize: copy && existsSync(copy) ? statSync(copy).size : size,
      open: async () =>
        copy && existsSync(copy)
          ? createReadStream(copy)
          : (await import('./xlsx.js')).sheetCsvStream(path, sheet, name, copy),
    };
  }
  if (format !== 'zip')
    return { format, textName: name, textSize: size, open: () => Promise.resolve(createReadStream(path)) };
  // The one zip rule of the service (service/lists/read/zip.ts): one .csv/.txt beside archiver noise, no
  // unsafe path, no zip bomb; its message is the service's own.
  const { inspectZip, openZipEntry, ZipProblem } = await import('../../../service/lists/read/zip.js');
  let entry: ZipEntryInfo;
  try {
    entry = await inspectZip(path);
  } catch (error) {
    if (error instanceof ZipProblem) throw new FileProblem(`“${name}”: ${error.message}`);
    throw error;
  }
  const textName = entry.fileName.split('/').pop() ?? entry.fileName;
  return {
    format,
    textName,
    textSize: entry.uncompressedSize,
    async open() {
      try {
        return await openZipEntry(path, entry.fileName);
      } catch (error) {
        if (error instanceof ZipProblem) throw new FileProblem(`“${name}”: ${error.message}`);
        throw error;
      }
    },
  };
}

/** Reads up to `limit` bytes from the start of a stream, then stops it. */
export async function readHead(
  stream: Readable,
  limit: number,
): Promise<{ bytes: Buffer; isWhole: boolean }> {
  const chunks: Buffer[] = [];
  let length = 0;
  let isWhole = true;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    chunks.push(buffer);
    length += buffer.length;
    if (length >= limit) {
      isWhole = false;
      break;
    }
  }
  stream.destroy();
  const bytes = Buffer.concat(chunks);
  if (bytes.length > limit) return { bytes: bytes.subarray(0, limit), isWhole: false };
  return { bytes, isWhole };
}

/** The encoding of a file from its first bytes, and how many of them are a byte-order mark. */
export function detectEncoding(head: Uint8Array, isWhole: boolean): { encoding: Encoding; bom: number } {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: 2 };
  try {
    // stream: a partial sample may end inside a character; that is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !isWhole });
    return { encoding: 'utf-8', bom: 0 };
  } catch {
    return { encoding: 'windows-1252', bom: 0 };
  }
}

/** Decodes a stream of bytes to text chunks. */
export async function* decodeStream(
  stream: AsyncIterable<Uint8Array>,
  encoding: Encoding,
): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding === 'utf-16be' ? 'utf-16be' : encoding, { ignoreBOM: false });
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}
