#!/usr/bin/env node
// Draws the app icon (the shapes of build/icons/icon.svg) into build/icons/icon.png, 1024×1024, for
// electron-builder (it makes .icns, .ico and Linux sizes from it). Generated, not committed (*.png is ignored).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const SIZE = 1024;
const SAMPLES = 3; // per axis, for anti-aliased edges
const accent = [0x24, 0x57, 0xc5];

const inRoundedRect = (x, y, left, top, width, height, radius) => {
  const cx = Math.min(Math.max(x, left + radius), left + width - radius);
  const cy = Math.min(Math.max(y, top + radius), top + height - radius);
  return (
    x >= left &&
    x <= left + width &&
    y >= top &&
    y <= top + height &&
    (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2
  );
};
const holes = [
  [392, 470],
  [512, 470],
  [632, 470],
  [392, 590],
  [512, 590],
  [632, 590],
  [452, 710],
  [572, 710],
];
/** 0 outside, 1 accent background, 2 white. */
function shade(x, y) {
  if (!inRoundedRect(x, y, 64, 64, 896, 896, 200)) return 0;
  const ring = Math.hypot(x - 512, y - 540);
  if (Math.abs(ring - 300) <= 32) return 2;
  if (inRoundedRect(x, y, 180, 300, 664, 64, 32)) return 2;
  if (holes.some(([hx, hy]) => (x - hx) ** 2 + (y - hy) ** 2 <= 40 ** 2)) return 2;
  return 1;
}

const rows = [];
for (let y = 0; y < SIZE; y++) {
  const row = Buffer.alloc(1 + SIZE * 4); // filter byte 0, then RGBA
  for (let x = 0; x < SIZE; x++) {
    let alpha = 0;
    let white = 0;
    for (let sy = 0; sy < SAMPLES; sy++)
      for (let sx = 0; sx < SAMPLES; sx++) {
        const s = shade(x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES);
        if (s > 0) alpha++;
        if (s === 2) white++;
      }
    const n = SAMPLES * SAMPLES;
    const t = alpha ? white / alpha : 0;
    const o = 1 + x * 4;
    for (let c = 0; c < 3; c++) row[o + c] = Math.round(accent[c] * (1 - t) + 255 * t);
    row[o + 3] = Math.round((alpha / n) * 255);
  }
  rows.push(row);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buffer) => {
  let c = 0xffffffff;
  for (const byte of buffer) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};
const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bit depth
header[9] = 6; // RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
const out = join(dirname(fileURLToPath(import.meta.url)), 'icons', 'icon.png');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, png);
console.log(`wrote ${out} (${png.length} bytes)`);
