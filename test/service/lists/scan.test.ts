// The row scanner against papaparse (the reference reading of CSV) on tricky input, read through windows of
// every size so that rows, quotes, \r\n pairs and multi-byte delimiters are cut at every possible place.
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import {
  detectLineBreak,
  RowScanner,
  SCAN_END,
  SCAN_ERROR,
  SCAN_NEED_MORE,
  SCAN_ROW,
  type ScanErrorKind,
} from '../../../service/lists/read/scan.js';

interface Scanned {
  rows: string[][];
  /** Each row's raw bytes, as the results file copies them. */
  raw: string[];
  error?: ScanErrorKind;
}

/** Scans `text` through a window of `windowSize` bytes, refilled as the pipeline refills it. */
function scanAll(text: string, delimiter: string, windowSize: number): Scanned {
  const bytes = Buffer.from(text, 'utf8');
  const mode = detectLineBreak(bytes).mode;
  const scanner = new RowScanner(Buffer.from(delimiter, 'utf8'), mode, 2);
  const window = Buffer.alloc(bytes.length + 8);
  let fileOffset = 0; // of window[0]
  let end = 0;
  let pos = 0;
  const fill = () => {
    window.copyWithin(0, pos, end);
    fileOffset += pos;
    end -= pos;
    pos = 0;
    const take = Math.min(windowSize, bytes.length - (fileOffset + end));
    bytes.copy(window, end, fileOffset + end, fileOffset + end + take);
    end += take;
    scanner.windowChanged();
  };
  const isLast = () => fileOffset + end >= bytes.length;
  const out: Scanned = { rows: [], raw: [] };
  fill();
  for (let guard = 0; guard < 100_000; guard++) {
    const result = scanner.scan(window, pos, end, isLast());
    if (result === SCAN_END) return out;
    if (result === SCAN_NEED_MORE) {
      fill();
      continue;
    }
    if (result === SCAN_ERROR) return { ...out, error: scanner.errorKind };
    expect(result).toBe(SCAN_ROW);
    const fields: string[] = [];
    for (let f = 0; f < scanner.fields; f++) {
      const value = window.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]);
      fields.push(scanner.fieldQuoted[f] ? value.replaceAll('""', '"') : value);
    }
    out.rows.push(fields);
    out.raw.push(window.toString('utf8', scanner.start, scanner.contentEnd));
    pos = scanner.next;
  }
  throw new Error('the scanner did not finish');
}

const papa = (text: string, delimiter: string) =>
  Papa.parse<string[]>(text, { delimiter, skipEmptyLines: false }).data.filter(
    (row, i, all) => !(i === all.length - 1 && row.length === 1 && row[0] === ''),
  );

const CASES: [string, string, string][] = [
  ['plain rows', ',', 'a,b,c\n1,2,3\n'],
  ['no final line break', ',', 'a,b\n1,2'],
  ['CRLF', ',', 'a,b\r\n1,2\r\n3,4\r\n'],
  ['old Mac CR', ',', 'a,b\r1,2\r3,4\r'],
  [
    'quoted delimiters, quotes and line breaks',
    ',',
    'a,"b,c","say ""hi""",d\n"multi\nline",x,"",y\n"CR\r\nLF",z,w,v\n',
  ],
  ['quotes inside unquoted fields', ',', 'O"Brien,a"b"c,x\n1,2,3\n'],
  ['empty fields and a trailing delimiter', ',', ',,\na,,\n,b,\n'],
  ['a lone CR inside a field', ',', 'a\rb,c\nd,e\n'],
  ['tabs', '\t', 'a\tb\t"c\td"\n1\t2\t3\n'],
  ['a multi-byte delimiter', '¦', 'a¦b¦"c¦d"\né¦ü¦ß\n'],
  ['UTF-8 text', ';', 'Zoë;Müller;"Straße; 5"\n日本;語;"テ""スト"\n'],
];

describe('RowScanner', () => {
  for (const [name, delimiter, text] of CASES) {
    it(`reads ${name} as papaparse does, whatever the window size`, () => {
      const expected = papa(text, delimiter);
      for (const windowSize of [1, 2, 3, 5, 7, 64, 1 << 16]) {
        const scanned = scanAll(text, delimiter, windowSize);
        expect(scanned.error).toBeUndefined();
        expect(scanned.rows, `window ${windowSize}`).toEqual(expected);
      }
    });
  }

  it('gives each row its raw bytes, quotes and all, without the line break', () => {
    const scanned = scanAll('a,"b,""c"""\r\n"x\ny",z\r\n', ',', 4);
    expect(scanned.raw).toEqual(['a,"b,""c"""', '"x\ny",z']);
  });

  it('reports an unterminated quote and text after a closing quote', () => {
    for (const size of [2, 1 << 16]) {
      expect(scanAll('a,b\n"open,x\ny,z\n', ',', size).error).toBe('unterminated-quote');
      expect(scanAll('a,b\n"closed" late,x\n', ',', size).error).toBe('text-after-quote');
    }
  });

  it('reads nothing past the valid bytes: a quoted last field ends with the file, whatever the window holds after', () => {
    // A window is reused: past its valid bytes lie an earlier window's, which may hold a quote or a line break.
    const cases: [string, string, string[]][] = [
      ['a,"b"', ',', ['a', 'b']],
      ['a,"b"""', ',', ['a', 'b""']],
      ['a,"b"\r', ',', ['a', 'b']],
      ['a¦"b"', '¦', ['a', 'b']],
      ['a¦"b"\r', '¦', ['a', 'b']],
    ];
    for (const [text, delimiter, fields] of cases) {
      const bytes = Buffer.from(text);
      for (const stale of ['"', '\n', '"\n', 'x']) {
        const scanner = new RowScanner(Buffer.from(delimiter), 'lf');
        const window = Buffer.concat([bytes, Buffer.from(stale)]);
        expect(scanner.scan(window, 0, bytes.length, true), `${text} then ${stale}`).toBe(SCAN_ROW);
        const read = Array.from({ length: scanner.fields }, (_, f) =>
          window.toString('utf8', scanner.fieldStart[f], scanner.fieldEnd[f]),
        );
        expect(read, `${text} then ${stale}`).toEqual(fields);
      }
    }
  });

  it('detects the line break from the first one outside quotes', () => {
    expect(detectLineBreak(Buffer.from('a,"b\r\nc"\nd'))).toEqual({ mode: 'lf', sequence: '\n' });
    expect(detectLineBreak(Buffer.from('a,b\r\nc'))).toEqual({ mode: 'lf', sequence: '\r\n' });
    expect(detectLineBreak(Buffer.from('a,b\rc'))).toEqual({ mode: 'cr', sequence: '\r' });
    expect(detectLineBreak(Buffer.from('one row'))).toEqual({ mode: 'lf', sequence: '\n' });
  });
});
