// The baselines of the list benchmark, run as their own processes: `parse FILE` (papaparse's streaming parse
// alone) and `naive FILE OUT` (papaparse + validator's isEmail + a Set for duplicates + Papa.unparse to a
// file: what a quick script would do).
import { createReadStream, writeFileSync } from 'node:fs';
import Papa from 'papaparse';
import validator from 'validator';

const [mode, file, out] = process.argv.slice(2);
if (!file) throw new Error('usage: listBaselines.js parse|naive FILE [OUT]');

if (mode === 'parse') {
  let rows = 0;
  await new Promise<void>((resolve, reject) =>
    Papa.parse<string[]>(createReadStream(file), {
      step: () => {
        rows++;
      },
      complete: () => resolve(),
      error: reject,
    }),
  );
  process.stdout.write(`${rows}\n`);
} else if (mode === 'naive') {
  const rows: string[][] = [];
  const seen = new Set<string>();
  await new Promise<void>((resolve, reject) =>
    Papa.parse<string[]>(createReadStream(file), {
      step: (result) => {
        const row = result.data;
        const email = (row[0] ?? '').trim().toLowerCase();
        const isDuplicate = seen.has(email);
        seen.add(email);
        rows.push([...row, validator.isEmail(email) ? 'valid' : 'invalid', isDuplicate ? 'true' : '']);
      },
      complete: () => resolve(),
      error: reject,
    }),
  );
  writeFileSync(out ?? `${file}.naive.csv`, Papa.unparse(rows));
  process.stdout.write(`${rows.length}\n`);
} else {
  throw new Error(`unknown mode ${mode}`);
}
