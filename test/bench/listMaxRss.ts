// Preloaded into a benchmarked process (`node --import …/listMaxRss.js`): when it exits, writes its peak
// resident set size — the whole process, worker threads included — to the file named by BENCH_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
