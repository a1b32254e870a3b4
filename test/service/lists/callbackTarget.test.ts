// Callback delivery: a failure after the retries is logged (without the URL's query); a private target is
// not even tried when private targets are not allowed; the address check itself.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListResource } from '../../../shared/api/list.js';
import { deliverCallback } from '../../../service/lists/node/callback.js';
import { isPrivateAddress } from '../../../service/lists/node/callbackTarget.js';

const DOCUMENT = { list_id: 41, status: 'Results' } as unknown as ListResource;

describe('callback delivery', () => {
  let server: Server;
  let url: string;
  let calls = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      calls++;
      request.resume();
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=secret-token`;
  });
  afterAll(() => server.close());

  it('logs a delivery that failed every attempt, without the query', async () => {
    const lines: string[] = [];
    const delivered = await deliverCallback(url, DOCUMENT, new AbortController().signal, {
      retryDelaysMs: [10, 10],
      log: (line) => lines.push(line),
    });
    expect(delivered).toBe(false);
    expect(calls).toBe(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^List 41: the callback to http:\/\/127\.0\.0\.1:\d+\/hook was not delivered: 3 attempts failed \(last: HTTP 500\)\.$/,
    );
    expect(lines[0]).not.toContain('secret-token');
  });

  it('does not connect to a private target when they are not allowed, and says so', async () => {
    const before = calls;
    const lines: string[] = [];
    const delivered = await deliverCallback(url, DOCUMENT, new AbortController().signal, {
      retryDelaysMs: [],
      allowPrivateTargets: false,
      log: (line) => lines.push(line),
    });
    expect(delivered).toBe(false);
    expect(calls).toBe(before);
    expect(lines[0]).toContain('private network');
  });

  it('tells private and public addresses apart', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.20.1.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
    ])
      expect(isPrivateAddress(address), address).toBe(true);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111'])
      expect(isPrivateAddress(address), address).toBe(false);
  });
});
