// The pre-check off the core's event loop (electron/core/files/analysis.ts): the same figures as the
// in-thread pre-check, progress in bytes and rows, Cancel through an AbortSignal, one read per file and
// layout; and a failed connection test in words (connection/failureWords.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../shared/api/client.js';
import { connectionErrorWords } from '../../../electron/core/connection/failureWords.js';
import {
  createFileChecks,
  FileWorkCancelled,
  precheckOffThread,
  type FileCheckProgress,
} from '../../../electron/core/files/analysis.js';
import { precheck } from '../../../electron/core/files/prepare.js';

// Long enough a row that the file (~11 MB) gets the pre-check's helper thread in the worker.
const NAME = 'Person with a rather long name column'.padEnd(40, '.');
const mapping = { delimiter: ',', header: true, roles: ['email', 'ignore'] as ('email' | 'ignore')[] };

describe('the pre-check in a worker thread', () => {
  let dir: string;
  let file: { path: string; name: string; size: number };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailsieve-checks-'));
    const lines = ['email,name'];
    for (let i = 0; i < 200_000; i++)
      lines.push(i % 1000 === 0 ? `bad-${i},X` : `p${i % 150_000}@example.com,${NAME}`);
    lines.push('', ',');
    const text = `${lines.join('\n')}\n`;
    const path = join(dir, 'list.csv');
    writeFileSync(path, text);
    file = { path, name: 'list.csv', size: Buffer.byteLength(text) };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers what the in-thread pre-check answers, reporting bytes and rows as it reads', async () => {
    const seen: { bytesRead: number; rows: number; totalBytes: number }[] = [];
    expect(file.size).toBeGreaterThan(8 * 1024 * 1024);
    // The worker checks addresses on two threads, this one on one: the same figures.
    const [offThread, inThread] = await Promise.all([
      precheckOffThread(file, mapping, false, { onProgress: (progress) => seen.push(progress) }),
      precheck(file, mapping, false),
    ]);
    expect(offThread).toEqual(inThread);
    expect(offThread).toMatchObject({ rowsToSend: 200_000, invalid: 200, blank: 2 });
    expect(offThread.duplicates).toBe(100_000 - 100);
    for (const progress of seen) {
      expect(progress.totalBytes).toBe(file.size);
      expect(progress.bytesRead).toBeLessThanOrEqual(file.size);
    }
    const rows = seen.map((progress) => progress.rows);
    expect([...rows].sort((a, b) => a - b)).toEqual(rows);
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    const running = precheckOffThread(file, mapping, false, { signal: controller.signal });
    controller.abort();
    await expect(running).rejects.toBeInstanceOf(FileWorkCancelled);
  });

  it('keeps one answer per file and layout, and cancels a run under way', async () => {
    const progress: FileCheckProgress[] = [];
    const checks = createFileChecks((p) => progress.push(p));
    try {
      checks.warm();
      const first = checks.precheck('f1', file, mapping, false);
      // The same question while it runs: the same run.
      expect(checks.precheck('f1', file, mapping, false)).toBe(first);
      const figures = await first;
      expect(checks.answered('f1', mapping)).toEqual(figures);
      expect(checks.answered('f1', { delimiter: ';', header: true })).toBeUndefined();
      // Asked again: the kept answer, no new read.
      const before = progress.length;
      await expect(checks.precheck('f1', file, mapping, false)).resolves.toEqual(figures);
      expect(progress.length).toBe(before);
      expect(progress.every((p) => p.fileId === 'f1')).toBe(true);
      // A split is another question: cancelled while it runs.
      const split = checks.precheck('f1', file, mapping, true);
      expect(checks.cancel('f1')).toBe(true);
      await expect(split).rejects.toMatchObject({ code: 'cancelled' });
      expect(checks.cancel('f1')).toBe(false);
    } finally {
      await checks.close();
    }
  });
});

describe('a failed connection test in words', () => {
  it('says a closed port, plain HTTP behind https://, an unknown name', async () => {
    // A port that was just free: nothing answers there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const closed = `http://127.0.0.1:${port}`;
    const refused = await createClient({ baseUrl: closed, apiKey: 'k', retries: 0 }).verify('a@example.com', {
      retries: 0,
      timeoutMs: 5000,
    });
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(connectionErrorWords(refused.error, closed)).toBe(
        `Nothing answers at 127.0.0.1:${port} — is the service running?`,
      );

    // An HTTP server asked over HTTPS.
    const plain = createServer((_request, response) => response.end('{}'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
    const httpsUrl = `https://127.0.0.1:${(plain.address() as { port: number }).port}`;
    try {
      const tls = await createClient({ baseUrl: httpsUrl, apiKey: 'k', retries: 0 }).verify('a@example.com', {
        retries: 0,
        timeoutMs: 5000,
      });
      expect(tls.ok).toBe(false);
      if (!tls.ok) {
        const words = connectionErrorWords(tls.error, httpsUrl);
        expect(words).toMatch(/^This address speaks HTTP, not HTTPS/);
        expect(words).not.toMatch(/ssl|EPROTO|routines/i);
      }
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
    expect(
      connectionErrorWords(
        { kind: 'network', message: 'POST /v1: getaddrinfo ENOTFOUND nowhere.invalid' },
        'https://nowhere.invalid',
      ),
    ).toBe('No computer is known by the name nowhere.invalid: check the address.');
  });
});
