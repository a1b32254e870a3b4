// What a service facing clients shows of the addresses a client's names led to: private ones are replaced by
// words in its explanations (issue 36, point 8), public ones and the name servers it asks are kept.
import { describe, expect, it } from 'vitest';
import { hidePrivateAddresses } from '../../../../service/engine/online/privateAddress.js';

describe('hidePrivateAddresses', () => {
  it('replaces private addresses, IPv4 and IPv6, and keeps the rest of the line', () => {
    expect(
      hidePrivateAddresses(
        'DNS (127.0.0.1:5353): users.example.net MX 10 mx.users.example.net [127.0.47.10, 203.0.113.7] (TTL 3600 s)',
      ),
    ).toBe(
      'DNS (127.0.0.1:5353): users.example.net MX 10 mx.users.example.net [a private address, 203.0.113.7] (TTL 3600 s)',
    );
    expect(hidePrivateAddresses('DNS: mx.example.net → 10.1.2.3, fd00::5, 2001:db8::1')).toBe(
      'DNS: mx.example.net → a private address, a private address, 2001:db8::1',
    );
    expect(hidePrivateAddresses('the domain itself is at ::ffff:192.168.1.4.')).toBe(
      'the domain itself is at a private address.',
    );
  });

  it('leaves lines without addresses as they are', () => {
    const line =
      'mx1.example.com: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)';
    expect(hidePrivateAddresses(line)).toBe(line);
    expect(hidePrivateAddresses('S: 250 2.1.5 Ok')).toBe('S: 250 2.1.5 Ok');
  });
});
