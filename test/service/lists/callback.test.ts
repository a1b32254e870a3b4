// The list-completion callback, received by a real local receiver (node:http on 127.0.0.1).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';
import { fixture, getStatus, startListService, submit, waitForList, type ListService } from './helpers.js';

interface Received {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: ListResource;
}

/** A receiver answering each POST with the next status of `answers` (the last one repeats); 0 never answers. */
async function receiver(
  answers: number[],
): Promise<{ url: string; received: Received[]; next(): Promise<Received>; close(): Promise<void> }> {
  const received: Received[] = [];
  const waiting: ((r: Received) => void)[] = [];
  const hanging: IncomingMessage[] = [];
  let calls = 0;
  const server: Server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const entry: Received = {
        path: request.url ?? '',
        contentType: request.headers['content-type'],
        body: listResourceSchema.parse(JSON.parse(text)),
      };
      received.push(entry);
      waiting.shift()?.(entry);
      const status = answers[Math.min(calls++, answers.length - 1)];
      if (status === 0) hanging.push(request);
      else response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    next: () => new Promise<Received>((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('list callback', () => {
  let svc: ListService;
  let key: string;
  beforeAll(async () => {
    svc = await startListService();
    key = svc.key();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('POSTs the status document as JSON when the list finishes, retrying a failed delivery', async () => {
    const hook = await receiver([500, 204]);
    try {
      const answer = await submit(svc.url, key, fixture('good/people.csv'), {
        query: { header: 'true', callback_url: `${hook.url}/hooks/lists?source=mailsieve` },
      });
      const id = answer.json<{ list_id: number }>().list_id;
      const first = await hook.next();
      const second = await hook.next();
      expect(first.path).toBe('/hooks/lists?source=mailsieve');
      expect(first.contentType).toBe('application/json');
      // The same document as E8 gives, with its report: first refused (500), then delivered again.
      const e8 = (await getStatus(svc.url, key, id)).json<ListResource>();
      expect(first.body).toEqual(e8);
      expect(second.body).toEqual(e8);
      expect(e8).toMatchObject({ list_id: id, status: 'Results' });
      expect(e8.services.email_validation?.reporting?.statuses).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(hook.received).toHaveLength(2); // delivered: no more attempts
    } finally {
      await hook.close();
    }
  });

  it('POSTs the document of a list that failed (Invalid, with its reason)', async () => {
    const hook = await receiver([200]);
    try {
      const answer = await submit(svc.url, key, fixture('broken/ragged-rows.csv'), {
        query: { header: 'true', callback_url: hook.url },
      });
      const id = answer.json<{ list_id: number }>().list_id;
      const delivered = await hook.next();
      expect(delivered.body).toMatchObject({ list_id: id, status: 'Invalid' });
      expect(delivered.body.reason).toMatch(/fields/);
    } finally {
      await hook.close();
    }
  });

  it('gives up after a few attempts, and a receiver that never answers holds nothing up', async () => {
    const dead = await receiver([0]);
    const failing = await receiver([503]);
    try {
      const slow = await submit(svc.url, key, 'email\njane@example.com\n', {
        query: { header: 'true', callback_url: dead.url },
      });
      const refused = await submit(svc.url, key, 'email\njohn@example.com\n', {
        query: { header: 'true', callback_url: failing.url },
      });
      const after = await submit(svc.url, key, 'email\nmary@example.com\n', { query: { header: 'true' } });
      for (const answer of [slow, refused, after])
        expect((await waitForList(svc.url, key, answer.json<{ list_id: number }>().list_id)).status).toBe(
          'Results',
        );
      // Four attempts in all (the first and three retries after 100, 200 and 400 ms), then no more.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(failing.received).toHaveLength(4);
      expect(dead.received.length).toBeGreaterThanOrEqual(1);
    } finally {
      await dead.close();
      await failing.close();
    }
  });
});
