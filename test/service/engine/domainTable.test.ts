// The engine's table of listed domains (service/engine/domainTable.ts): lookups through collisions, the last
// list's value for a domain in several, the bytes a build writes and a thread reads back, and the engine's
// own table agreeing with the lists it is made of.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DomainTable, isAscii } from '../../../service/engine/domainTable.js';
import { buildOwnTypeTable, domainTypeOf } from '../../../service/engine/domainType.js';

const require = createRequire(import.meta.url);
const root = join(import.meta.dirname, '..', '..', '..');

/** Domains that share a table's slots: many more than its 1,024 slots' first probes tell apart. */
const many = Array.from({ length: 600 }, (_, i) => `d${i}.example`);

describe('DomainTable', () => {
  test('finds every domain it holds, with its value, and no other', () => {
    const table = DomainTable.of([
      { domains: many, value: 7 },
      { domains: ['mail.example.org'], value: 200 },
    ]);
    for (const domain of many) expect(table.get(domain)).toBe(7);
    expect(table.get('mail.example.org')).toBe(200);
    // Misses: a prefix, a longer name, another case, an empty string, a name of the same length.
    for (const domain of ['d1.exampl', 'd1.examples', 'D1.example', '', 'x1.example', 'example.org'])
      expect(table.get(domain)).toBe(0);
  });

  test('a domain in several lists keeps the last list’s value, held once', () => {
    const once = DomainTable.of([{ domains: ['a.com', 'b.com'], value: 1 }]);
    const twice = DomainTable.of([
      { domains: ['a.com', 'b.com'], value: 1 },
      { domains: ['b.com', 'b.com'], value: 2 },
    ]);
    expect(twice.get('a.com')).toBe(1);
    expect(twice.get('b.com')).toBe(2);
    expect(twice.byteLength).toBe(once.byteLength);
  });

  test('leaves out what no lookup asks for: Unicode domains (lookups are of A-labels)', () => {
    const table = DomainTable.of([{ domains: ['münchen.de', 'xn--mnchen-3ya.de'], value: 3 }]);
    expect(table.get('münchen.de')).toBe(0);
    expect(table.get('xn--mnchen-3ya.de')).toBe(3);
  });

  test('refuses values it cannot hold', () => {
    expect(() => DomainTable.of([{ domains: ['a.com'], value: 0 }])).toThrow(/1–255/);
    expect(() => DomainTable.of([{ domains: ['a.com'], value: 256 }])).toThrow(/1–255/);
  });

  test('reads back from its bytes, at any offset of a buffer, and refuses bytes that are not a table', () => {
    const table = DomainTable.of([{ domains: many, value: 9 }]);
    const bytes = table.toBytes();
    // As a file read into a bigger buffer would give them: not at the buffer's start.
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    const read = DomainTable.fromBytes(padded.subarray(3));
    for (const domain of many) expect(read.get(domain)).toBe(9);
    expect(read.get('d600.example')).toBe(0);
    expect(() => DomainTable.fromBytes(bytes.subarray(0, bytes.length - 1))).toThrow(/cut short/);
    expect(() => DomainTable.fromBytes(new Uint8Array(64))).toThrow(/not a domain table/);
  });
});

describe('the engine’s table of listed domains', () => {
  test('agrees with the lists it is made of, through its bytes', () => {
    const table = DomainTable.fromBytes(buildOwnTypeTable().toBytes());
    const free = require('free-email-domains/domains.json') as string[];
    const disposable = require('disposable-email-domains/index.json') as string[];
    // Every disposable domain reads disposable (the disposable lists win over the free-mail list), unless our
    // curated lists say what it is (a relay the disposable list also names is `privacy`).
    const types = new Map<string | undefined, number>();
    for (const domain of disposable.filter(isAscii)) {
      const type = domainTypeOf(domain);
      types.set(type, (types.get(type) ?? 0) + 1);
    }
    expect(
      [...types.keys()].every((type) => ['disposable', 'privacy', 'paidisp', 'wireless'].includes(type!)),
    ).toBe(true);
    expect(types.get('disposable')).toBeGreaterThan(disposable.length - 100);
    const disposableSet = new Set(disposable);
    const freeOnly = free.filter((d) => !disposableSet.has(d) && isAscii(d));
    expect(freeOnly.length).toBeGreaterThan(10_000);
    for (const domain of freeOnly.slice(0, 2000)) expect(table.get(domain)).toBeGreaterThan(0);
    expect(domainTypeOf('gmail.com')).toBe('freeisp');
    expect(domainTypeOf('mailinator.com')).toBe('disposable');
    expect(domainTypeOf('duck.com')).toBe('privacy');
    expect(domainTypeOf('acme-widgets.com')).toBeUndefined();
  });

  test('is what the build wrote beside the compiled engine (which threads read instead of making it)', () => {
    // dist/ is built by `npm test` before Vitest; a table older than the lists (a package updated since the
    // build) fails here.
    const built = readFileSync(join(root, 'dist', 'service', 'engine', 'data', 'domain-types.bin'));
    expect(Buffer.from(buildOwnTypeTable().toBytes()).equals(built)).toBe(true);
  });
});
