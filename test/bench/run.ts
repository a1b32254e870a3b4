// `npm run bench [-- NAME…]`: runs the benchmarks (all, or those named), prints their figures and writes them
// to test/bench/out/latest.json. Timings are for reading as ratios against baselines measured in the same run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchE1 } from './e1.js';

const benches: Record<string, () => Promise<Record<string, number>>> = {
  e1: () => benchE1({ seconds: Number(process.env.BENCH_SECONDS ?? 10) }),
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = wanted.filter((name) => !(name in benches));
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(benches).join(', ')}`);
  process.exit(2);
}
const results: Record<string, Record<string, number>> = {};
for (const name of wanted.length ? wanted : Object.keys(benches)) results[name] = await benches[name]();
const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'bench', 'out');
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, 'latest.json'),
  `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`,
);
