// The address hash of duplicates, in its three forms (service/lists/read/dupTable.ts): a string, a string
// lower-cased as it goes, and bytes lower-cased as they go. The pipeline's `Duplicate` column and the
// exporter's dedupe hash an address by different forms, so they must agree, and a hash must not change
// unnoticed (the value below is the one of the first release of this hash).
import { describe, expect, it } from 'vitest';
import {
  hashAsciiLowerAddressInto,
  hashAsciiLowerInto,
  hashAsciiLowerTextInto,
  hashInto,
} from '../../../service/lists/read/dupTable.js';

const hashOf = (text: string): [number, number] => {
  const out = new Uint32Array(2);
  hashInto(text, out, 0);
  return [out[0], out[1]];
};

describe('the duplicate hash', () => {
  it('keeps its value', () => {
    expect(hashOf('jane.doe@example.com')).toEqual([4261674112, 3462860774]);
  });

  it('is the same from a string, a string lower-cased as it goes, and bytes lower-cased as they go', () => {
    for (const address of ['Jane.Doe@Example.COM', 'a@b.co', '', 'X', 'user+tag@MAIL.example.org']) {
      const expected = hashOf(address.toLowerCase());
      const fromText = new Uint32Array(2);
      expect(hashAsciiLowerTextInto(address, fromText, 0)).toBe(true);
      expect([...fromText]).toEqual(expected);
      const bytes = Buffer.from(`,${address},`);
      const fromBytes = new Uint32Array(4);
      expect(hashAsciiLowerInto(bytes, 1, bytes.length - 1, fromBytes, 2)).toBe(true);
      expect([...fromBytes.subarray(2)]).toEqual(expected);
      const at = address.lastIndexOf('@');
      if (at < 0) continue;
      const fromParts = new Uint32Array(2);
      expect(hashAsciiLowerAddressInto(address.slice(0, at), address.slice(at + 1), fromParts, 0)).toBe(true);
      expect([...fromParts]).toEqual(expected);
    }
  });

  it('leaves a text that is not ASCII to Unicode lower case', () => {
    const out = new Uint32Array(2);
    expect(hashAsciiLowerTextInto('zoë@example.com', out, 0)).toBe(false);
    expect(hashAsciiLowerInto(Buffer.from('ZOË@example.com'), 0, 16, out, 0)).toBe(false);
    expect(hashAsciiLowerAddressInto('zoë', 'example.com', out, 0)).toBe(false);
    expect(hashAsciiLowerAddressInto('zoe', 'exämple.com', out, 0)).toBe(false);
    expect([...out]).toEqual([0, 0]);
  });
});
