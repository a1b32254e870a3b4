// Records of delimited text, streamed: quote-aware (a line break inside a quoted field stays in its record),
// any of \n, \r\n or \r as the line break. Used for the offline pre-check, splitting, previews and exports,
// all of which must get through a million-row file without holding it.

/** Splits one record into fields (RFC 4180 quoting). Fast path for records without quotes. */
export function splitFields(raw: string, delimiter: string): string[] {
  if (!raw.includes('"')) return raw.split(delimiter);
  const fields: string[] = [];
  let i = 0;
  const n = raw.length;
  for (;;) {
    let field = '';
    if (raw[i] === '"') {
      let j = i + 1;
      for (;;) {
        const q = raw.indexOf('"', j);
        if (q < 0) {
          field += raw.slice(j);
          j = n;
          break;
        }
        field += raw.slice(j, q);
        if (raw[q + 1] === '"') {
          field += '"';
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      const next = raw.indexOf(delimiter, j);
      const end = next < 0 ? n : next;
      field += raw.slice(j, end);
      i = end;
    } else {
      const next = raw.indexOf(delimiter, i);
      const end = next < 0 ? n : next;
      field = raw.slice(i, end);
      i = end;
    }
    fields.push(field);
    if (i >= n) break;
    i += delimiter.length;
    if (i >= n) {
      fields.push('');
      break;
    }
  }
  return fields;
}

/**
 * Batches of records from text chunks. The line break is learnt from the first chunk (`\r` alone only when
 * no `\n` appears). A record ends at a line break outside quotes: where the count of `"` since its start is
 * even. Blank records are kept (callers decide); a final record without a line break is included.
 */
export async function* readRecordBatches(
  chunks: AsyncIterable<string>,
  onLineBreak?: (sequence: string) => void,
): AsyncGenerator<string[]> {
  let carry = '';
  let lineBreak: '\n' | '\r' | undefined;
  let isFirst = true;
  for await (const chunk of chunks) {
    let text = carry + chunk;
    if (isFirst) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      isFirst = false;
    }
    if (lineBreak === undefined) {
      if (text.includes('\n')) lineBreak = '\n';
      else if (text.includes('\r') && text.indexOf('\r') < text.length - 1) lineBreak = '\r';
      else {
        carry = text;
        continue;
      }
      onLineBreak?.(lineBreak === '\n' ? (text.includes('\r\n') ? '\r\n' : '\n') : '\r');
    }
    const batch: string[] = [];
    let start = 0;
    let from = 0;
    let quotes = 0;
    for (;;) {
      const nl = text.indexOf(lineBreak, from);
      if (nl < 0) break;
      // Count quotes between `from` and the line break.
      let q = text.indexOf('"', from);
      while (q >= 0 && q < nl) {
        quotes++;
        q = text.indexOf('"', q + 1);
      }
      if (quotes % 2 === 1) {
        from = nl + 1;
        continue;
      }
      let end = nl;
      if (lineBreak === '\n' && text.charCodeAt(end - 1) === 13 && end > start) end--;
      batch.push(text.slice(start, end));
      start = nl + 1;
      from = start;
      quotes = 0;
    }
    carry = text.slice(start);
    if (batch.length) yield batch;
  }
  if (carry !== '') {
    if (carry.endsWith('\r') && lineBreak === '\n') carry = carry.slice(0, -1);
    yield [carry];
  }
}
