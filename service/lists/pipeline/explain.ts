// Why, per row: for a list with online checks, a CSV beside its results (explain.csv in the list's folder)
// with, for each row in order, its address, its status code, how far its check went and what answered
// ("mx1.example.com: 550 5.1.1 User unknown", "DNS: … has no MX and no address: the domain takes no mail").
// Read later through GET /v5/list/{id}/explain (a Mailsieve extension) and by `clean --explain`.
import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { describeStatusCode } from '../../../shared/api/codes.js';
import type { OnlineVerdicts } from '../types.js';

export const EXPLAIN_COLUMNS = ['Row', 'Email', 'Status Code', 'Checked', 'Why'] as const;

/** The online answers of a list's distinct addresses, and which address each row holds. */
export class OnlineExplained {
  private rowAddress = new Int32Array(0);
  private addresses: readonly string[] = [];
  private checked: string[] = [];
  private whys: string[] = [];

  begin(rowCount: number, addresses: readonly string[], rowsOf: readonly (readonly number[])[]): void {
    this.rowAddress = new Int32Array(rowCount).fill(-1);
    rowsOf.forEach((rows, index) => {
      for (const row of rows) this.rowAddress[row] = index;
    });
    this.addresses = addresses;
    this.checked = new Array<string>(addresses.length).fill('');
    this.whys = new Array<string>(addresses.length).fill('');
  }

  add(verdicts: OnlineVerdicts): void {
    for (let k = 0; k < verdicts.indexes.length; k++) {
      const index = verdicts.indexes[k];
      this.checked[index] = verdicts.checked[k] ?? '';
      this.whys[index] = verdicts.whys[k] ?? '';
    }
  }

  /** The address, how far, and why, of a row checked online; undefined for a row decided offline. */
  of(row: number): { email: string; checked: string; why: string } | undefined {
    const index = row < this.rowAddress.length ? this.rowAddress[row] : -1;
    if (index < 0) return undefined;
    return {
      email: this.addresses[index] ?? '',
      checked: this.checked[index] ?? '',
      why: this.whys[index] ?? '',
    };
  }
}

const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);

/** Writes the explain CSV (temporary name, renamed when complete), buffered. */
export class ExplainWriter {
  private readonly fd: number;
  private parts: string[] = [];
  private size = 0;
  private isClosed = false;

  constructor(private readonly path: string) {
    this.fd = openSync(`${path}.tmp`, 'w', 0o600);
    this.push(`${EXPLAIN_COLUMNS.join(',')}\n`);
  }

  row(row: number, email: string, code: number, explained: ReturnType<OnlineExplained['of']>): void {
    const checked = explained?.checked || 'offline';
    const why = explained?.why || `decided offline: ${describeStatusCode(code)}`;
    this.push(`${row},${csvField(explained?.email ?? email)},${code},${checked},${csvField(why)}\n`);
  }

  private push(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.parts.length === 0) return;
    writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }

  finish(): void {
    this.flush();
    this.isClosed = true;
    closeSync(this.fd);
    renameSync(`${this.path}.tmp`, this.path);
  }

  /** Closes the file when `finish` did not (the temporary file is removed by the pipeline). */
  abandon(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    closeSync(this.fd);
  }
}
