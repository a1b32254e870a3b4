const { sheetCsv } = await import('/work/main/dist/electron/core/files/xlsx.js');
const t = Date.now(); let n = 0;
for await (const c of sheetCsv('/tmp/cl/o/list-1000000-clean.xlsx')) { n += c.length; if (n > 20e6) break; }
console.log(n, Date.now() - t, 'ms');
