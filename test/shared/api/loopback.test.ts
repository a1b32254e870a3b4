import { describe, expect, it } from 'vitest';
import { isLoopbackHost, isLoopbackUrl } from '../../../shared/api/loopback.js';

describe('isLoopbackHost', () => {
  it('takes the loopback names and addresses', () => {
    for (const host of [
      'localhost',
      '::1',
      '[::1]',
      '127.0.0.1',
      '127.0.0.2',
      '127.255.255.255',
      '127.10.200.9',
    ])
      expect(isLoopbackHost(host), host).toBe(true);
  });

  it('refuses other hosts, and 127 prefixes that are not addresses', () => {
    for (const host of [
      '127.1.2.300',
      '127.0.0.256',
      '127.0.0',
      '127.0.0.1.5',
      '127.01.0.1',
      '127.0.0.1 ',
      '127.0.0.1.nip.io',
      '128.0.0.1',
      '10.0.0.1',
      '0.0.0.0',
      '::',
      'localhost.example.com',
      '',
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('isLoopbackUrl', () => {
  it('reads the host of a base URL', () => {
    expect(isLoopbackUrl('http://127.0.0.1:8080')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8080/v5')).toBe(true);
    expect(isLoopbackUrl('http://localhost')).toBe(true);
    expect(isLoopbackUrl('https://api.example.com')).toBe(false);
    expect(isLoopbackUrl('not a url')).toBe(false);
  });
});
