// Reading a list file as the service will: a .csv/.txt as it is, a .zip by its one file. Text is decoded by
// the encoding seen at the start (a byte-order mark, else UTF-8 when it decodes, else Windows-1252).
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { zipErrorWords } from '../../../service/lists/zip.js';
import { notAListFile } from '../../../shared/fileName.js';
import type { ENCODINGS } from '../../../shared/desktop/contract.js';

export type Encoding = (typeof ENCODINGS)[number];
export type FileFormat = 'csv' | 'txt' | 'zip';

export function formatOf(name: string): FileFormat | undefined {
  const match = /\.(csv|txt|zip)$/i.exec(name);
  return match ? (match[1].toLowerCase() as FileFormat) : undefined;
}

function isNoise(fileName: string): boolean {
  return (
    fileName.endsWith('/') ||
    fileName.startsWith('__MACOSX/') ||
    /(^|\/)\._/.test(fileName) ||
    /(^|\/)\.DS_Store$/.test(fileName)
  );
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

/** The text inside a list file; a zip must hold exactly one .csv or .txt file. */
export async function openListSource(path: string, name: string, size: number): Promise<ListSource> {
  const format = formatOf(name);
  if (!format) throw new FileProblem(notAListFile(name));
  if (format !== 'zip')
    return { format, textName: name, textSize: size, open: () => Promise.resolve(createReadStream(path)) };
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(path, { autoClose: true, lazyEntries: true });
  } catch (error) {
    throw new FileProblem(`“${name}” is not a readable zip archive (${(error as Error).message}).`);
  }
  const entries: yauzl.Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (!isNoise(entry.fileName)) entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve());
    zip.once('error', (error: Error) => reject(new FileProblem(zipErrorWords(error))));
    zip.readEntry();
  });
  if (entries.length !== 1) {
    zip.close();
    throw new FileProblem(
      entries.length === 0
        ? `“${name}” holds no file: a zip list must contain exactly one .csv or .txt file.`
        : `“${name}” holds ${entries.length} files: a zip list must contain exactly one .csv or .txt file.`,
    );
  }
  const entry = entries[0];
  zip.close();
  const textName = entry.fileName.split('/').pop() ?? entry.fileName;
  if (!/\.(csv|txt)$/i.test(textName))
    throw new FileProblem(`The file inside “${name}” is “${textName}”; it must be a .csv or .txt file.`);
  return {
    format,
    textName,
    textSize: entry.uncompressedSize,
    async open() {
      const reopened = await yauzl.openPromise(path, { autoClose: true, lazyEntries: true });
      return new Promise<Readable>((resolve, reject) => {
        reopened.on('entry', (candidate: yauzl.Entry) => {
          if (candidate.fileName !== entry.fileName) return reopened.readEntry();
          reopened.openReadStream(candidate, (error, stream) => (error ? reject(error) : resolve(stream)));
        });
        reopened.once('end', () => reject(new FileProblem('The file inside the zip archive went missing.')));
        reopened.once('error', reject);
        reopened.readEntry();
      });
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
export async function* decodeStream(stream: Readable, encoding: Encoding): AsyncGenerator<string> {
  const decoder = new TextDecoder(encoding === 'utf-16be' ? 'utf-16be' : encoding, { ignoreBOM: false });
  for await (const chunk of stream) {
    const text = decoder.decode(chunk as Buffer, { stream: true });
    if (text) yield text;
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}
