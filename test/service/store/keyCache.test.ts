// KeyCache (service/store/keyCache.ts): the request path's cache of valid keys, by the key as given.
import { describe, expect, it } from 'vitest';
import { KeyCache } from '../../../service/store/keyCache.js';

describe('KeyCache', () => {
  it('finds each key it holds, and no other, when keys share a chain', () => {
    const cache = new KeyCache<number>();
    // Same length and last three characters: one chain. Short keys, and keys that differ early only.
    const keys = ['msk_aaaaXYZ', 'msk_bbbbXYZ', 'msk_ccccXYZ', 'a', 'ab', '', 'abc', 'Xabc', 'msk_aaaaXYZ!'];
    keys.forEach((key, i) => cache.set(key, i));
    keys.forEach((key, i) => {
      expect(cache.get(key), key).toBe(i);
      expect(cache.has(key), key).toBe(true);
    });
    for (const other of ['msk_ddddXYZ', 'msk_aaaaXYz', 'b', 'abd', 'msk_aaaaXY', `msk_aaaa${'XYZ'}`.slice(1)])
      expect(cache.get(other), other).toBeUndefined();
    // A key given as a different string object of the same text is found.
    expect(cache.get(['msk_', 'bbbb', 'XYZ'].join(''))).toBe(1);
  });

  it('replaces a key set again, and forgets every key when cleared', () => {
    const cache = new KeyCache<string>();
    cache.set('msk_one', 'first');
    cache.set('msk_two', 'two');
    cache.set('msk_one', 'again');
    expect(cache.get('msk_one')).toBe('again');
    expect(cache.get('msk_two')).toBe('two');
    cache.clear();
    expect(cache.get('msk_one')).toBeUndefined();
    expect(cache.has('msk_two')).toBe(false);
  });
});
