// Column detection (shared/columns.ts): header synonyms, delimiter, header row and email column.
import { describe, expect, it } from 'vitest';
import {
  columnKindOf,
  detectDelimiter,
  detectLayout,
  normaliseHeaderName,
  parseSampleRows,
  resolveLayout,
} from '../../../shared/columns.js';

describe('header synonyms', () => {
  it('match case-insensitively, ignoring spaces, dots, dashes and underscores', () => {
    expect(normaliseHeaderName(' E-Mail_Address ')).toBe('emailaddress');
    for (const name of ['Email', 'E-mail', 'e_mail', 'EMAIL ADDRESS', 'e.mail'] as const)
      expect(columnKindOf(name)).toBe('email');
    expect(columnKindOf('First Name')).toBe('first_name');
    expect(columnKindOf('fname')).toBe('first_name');
    expect(columnKindOf('SURNAME')).toBe('last_name');
    expect(columnKindOf('Address 1')).toBe('street');
    expect(columnKindOf('address_2')).toBe('street2');
    expect(columnKindOf('Town')).toBe('city');
    expect(columnKindOf('Province')).toBe('state');
    expect(columnKindOf('Postal-Code')).toBe('zip');
    expect(columnKindOf('plus4')).toBe('zip');
    expect(columnKindOf('Full Name')).toBe('full_name');
    expect(columnKindOf('SHA1')).toBe('sha1');
    expect(columnKindOf('favourite colour')).toBeUndefined();
  });
});

describe('detection', () => {
  it('finds the delimiter by content, the file name breaking ties', () => {
    expect(detectDelimiter('a;b;c\n1;2;3\n', 'x.csv')).toEqual({ delimiter: ';', how: 'content' });
    expect(detectDelimiter('a\tb\n1\t2\n', 'x.csv')).toEqual({ delimiter: '\t', how: 'content' });
    expect(detectDelimiter('a,b|c\n1,2|3\n', 'x.txt')).toEqual({ delimiter: ',', how: 'content' });
    expect(detectDelimiter('"x, y"|z\n"1, 2"|3\n', 'x.csv')).toEqual({ delimiter: '|', how: 'content' });
    expect(detectDelimiter('jane@example.com\njohn@example.org\n', 'x.txt')).toEqual({
      delimiter: '\t',
      how: 'extension',
    });
    expect(detectDelimiter('jane@example.com\n', 'x.csv')).toEqual({ delimiter: ',', how: 'extension' });
  });

  it('detects a header row by its names, or by a first row without the addresses below it', () => {
    const named = detectLayout('First Name,Email,City\nJane,jane@example.com,Salem\n', 'x.csv');
    expect(named).toMatchObject({
      ok: true,
      layout: {
        header: true,
        emailColumn: 2,
        emailColumnHow: 'header',
        columnNames: ['First Name', 'Email', 'City'],
      },
    });
    const unnamed = detectLayout('who,where\njane@example.com,Salem\njohn@example.org,Dover\n', 'x.csv');
    expect(unnamed).toMatchObject({ ok: true, layout: { header: true, emailColumn: 1 } });
    const headless = detectLayout('Jane;jane@example.com;Salem\nJohn;john@example.org;Dover\n', 'x.csv');
    expect(headless).toMatchObject({
      ok: true,
      layout: {
        header: false,
        delimiter: ';',
        emailColumn: 2,
        columnNames: ['Column 1', 'Email', 'Column 3'],
      },
    });
  });

  it('takes the email column by its header name when its values are too dirty to tell', () => {
    const rows = parseSampleRows('name,e-mail\nJane,not given\nJohn,john at example\n', ',').rows;
    expect(resolveLayout(rows, { delimiter: ',', header: true })).toMatchObject({
      ok: true,
      layout: { emailColumn: 2, emailColumnHow: 'header' },
    });
  });

  it('refuses to guess between two columns of addresses, and follows email_column', () => {
    const rows = parseSampleRows('email,alt\na@example.com,b@example.com\n', ',').rows;
    const refused = resolveLayout(rows, { delimiter: ',', header: true });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toMatch(/columns 1 'email', 2 'alt'.*email_column/);
    expect(resolveLayout(rows, { delimiter: ',', header: true, emailColumn: 2 })).toMatchObject({
      ok: true,
      layout: { emailColumn: 2 },
    });
  });

  it('parses samples with quotes, and drops a row cut off by the end of a partial sample', () => {
    expect(parseSampleRows('a,"b,""c"""\r\n"x\ny",z\r\nq,"cut', ',', { isWhole: false })).toEqual({
      rows: [
        ['a', 'b,"c"'],
        ['x\ny', 'z'],
      ],
      isWhole: false,
    });
    expect(parseSampleRows('\uFEFFemail\n\n  \njane@example.com', ',').rows).toEqual([
      ['email'],
      ['jane@example.com'],
    ]);
  });
});
