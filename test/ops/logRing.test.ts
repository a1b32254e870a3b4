// The JSON log's ring (service/ops/logRing.ts) and its writer thread: lines come out whole, in the order they
// were logged, however the ring wraps or fills; what is logged before the process exits is written; a closed
// standard output does not stop the node.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  jsonRequestLine,
  ringBuffers,
  WRITER_STEPS_BELOW,
  RingReader,
  RingWriter,
  routeMember,
} from '../../service/ops/logRing.js';
import { tempDir } from '../helpers/service.js';

const decoder = new TextDecoder();
const linesOf = (bytes: Uint8Array) => decoder.decode(bytes).split('\n').filter(Boolean);

describe('the log ring', () => {
  it('gives request lines as pino writes them, and other lines as given, in the order logged', () => {
    const buffers = ringBuffers(1 << 16);
    const writer = new RingWriter(buffers);
    const reader = new RingReader(buffers);
    const route = writer.route('/v5/ev');
    const time = Date.parse('2026-11-28T10:00:00.123Z');
    writer.request(route, 'req-1', 200, 0.1234, 7, time + 0.6);
    writer.text('{"level":"info","msg":"between"}\n');
    writer.request(route, 'req-2', 404, 12.5, null, time);
    writer.publish();
    const lines = linesOf(reader.take());
    expect(lines).toEqual([
      '{"level":"info","time":"2026-11-28T10:00:00.123Z","reqId":"req-1","route":"/v5/ev","status":200,"ms":0.12,"keyId":7,"msg":"request"}',
      '{"level":"info","msg":"between"}',
      '{"level":"info","time":"2026-11-28T10:00:00.123Z","reqId":"req-2","route":"/v5/ev","status":404,"ms":12.5,"msg":"request"}',
    ]);
    expect(reader.take().length).toBe(0);
  });

  it('writes numbers as JSON does and escapes an id that needs it', () => {
    const route = routeMember('/v5/"odd"');
    for (const ms of [0, 0.004, 0.005, 0.1, 0.25, 1.999, 52.2349, 1000, 123456.78]) {
      const line = JSON.parse(jsonRequestLine(Date.now(), 'id "é\\', route, 200, ms, 3)) as Record<
        string,
        unknown
      >;
      expect(line).toMatchObject({
        reqId: 'id "é\\',
        route: '/v5/"odd"',
        ms: Math.round(ms * 100) / 100,
        keyId: 3,
      });
    }
  });

  it('writes each line its own route, status and key when they interleave, past the key ids whose ends it keeps', () => {
    const buffers = ringBuffers(1 << 20);
    const writer = new RingWriter(buffers);
    const reader = new RingReader(buffers);
    const routes = ['/v5/ev', '/v5/lists/:id'].map((name) => ({ name, index: writer.route(name) }));
    const time = Date.parse('2026-11-28T10:00:00.123Z');
    const expected: string[] = [];
    const seen: string[] = [];
    // 6,000 keys, each twice (more than the 4,096 whose line ends a builder keeps), and lines without a key.
    for (let i = 0; i < 14_000; i++) {
      const route = routes[i % 2];
      const status = [200, 400, 429][i % 3];
      const keyId = i % 7 === 6 ? null : i % 6_000;
      writer.request(route.index, `req-${i}`, status, 1.5, keyId, time);
      const line = {
        level: 'info',
        time: '2026-11-28T10:00:00.123Z',
        reqId: `req-${i}`,
        route: route.name,
        status,
      };
      expected.push(
        JSON.stringify({ ...line, ms: 1.5, ...(keyId === null ? {} : { keyId }), msg: 'request' }),
      );
      if (i % 500 === 499) {
        writer.publish();
        seen.push(...linesOf(reader.take()));
      }
    }
    writer.publish();
    seen.push(...linesOf(reader.take()));
    expect(seen).toEqual(expected);
  });

  it('keeps every line whole and in order while the ring wraps many times', () => {
    const buffers = ringBuffers(1 << 14);
    const writer = new RingWriter(buffers);
    const reader = new RingReader(buffers);
    const route = writer.route('/v5/ev');
    const seen: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      if (i % 7 === 0) writer.text(`{"n":${i},"pad":"${'x'.repeat(i % 300)}"}\n`);
      else writer.request(route, `req-${i}`, 200, i / 1000, i, Date.now());
      if (i % 50 === 49) {
        writer.publish();
        seen.push(...linesOf(reader.take()));
      }
    }
    writer.publish();
    seen.push(...linesOf(reader.take()));
    expect(seen).toHaveLength(20_000);
    seen.forEach((line, i) => {
      const record = JSON.parse(line) as { n?: number; reqId?: string };
      expect(i % 7 === 0 ? record.n : record.reqId).toBe(i % 7 === 0 ? i : `req-${i}`);
    });
  });

  it('lets a full ring be read by its inline reader: nothing is lost, nothing waits', () => {
    const buffers = ringBuffers(1 << 14);
    const reader = new RingReader(buffers);
    const out: string[] = [];
    const writer = new RingWriter(buffers, () => out.push(...linesOf(reader.take())));
    const route = writer.route('/v5/ev');
    for (let i = 0; i < 5_000; i++) writer.request(route, `req-${i}`, 200, 1, null, Date.now());
    writer.publish();
    out.push(...linesOf(reader.take()));
    expect(out.map((line) => (JSON.parse(line) as { reqId: string }).reqId)).toEqual(
      Array.from({ length: 5_000 }, (_, i) => `req-${i}`),
    );
  });

  it('cuts a line longer than a twelfth of the ring rather than failing', () => {
    const buffers = ringBuffers(1 << 14);
    const writer = new RingWriter(buffers);
    const reader = new RingReader(buffers);
    writer.text(`${'y'.repeat(50_000)}\n`);
    const [line] = linesOf(reader.take());
    expect(line.length).toBeLessThan(2_000);
    expect(line).toMatch(/^y+$/);
  });
});

// A process that logs like a node (createLogger's JSON log on standard output) and exits at once.
const logModule = join(fileURLToPath(new URL('../../dist/service/ops/log.js', import.meta.url)));
const loggingProcess = (requests: number) => `
  const { createLogger, requestLineFor } = await import(${JSON.stringify(logModule)});
  const logger = createLogger({ format: 'json' });
  logger.info('first');
  const line = requestLineFor(logger, '/v5/ev');
  for (let i = 0; i < ${requests}; i++) line('req-' + i, 200, 0.5, 1, performance.now());
  logger.info('last');
  process.exit(0);
`;

function run(code: string, stdout: 'pipe' | 'ignore' | number) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', stdout, 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

describe('the JSON log of a node', () => {
  it('writes every line logged before the process exits, in order', async () => {
    const dir = tempDir('mailsieve-logring-');
    try {
      const file = join(dir.path, 'out.log');
      const { openSync, closeSync } = await import('node:fs');
      const fd = openSync(file, 'w');
      const child = run(loggingProcess(200_000), fd);
      closeSync(fd);
      expect(await child.exited, child.stderr()).toBe(0);
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      expect(lines).toHaveLength(200_002);
      expect(JSON.parse(lines[0])).toMatchObject({ msg: 'first' });
      expect(JSON.parse(lines[1])).toMatchObject({ reqId: 'req-0', route: '/v5/ev', status: 200, ms: 0.5 });
      expect(JSON.parse(lines[200_000])).toMatchObject({ reqId: 'req-199999' });
      expect(JSON.parse(lines[200_001])).toMatchObject({ msg: 'last' });
    } finally {
      dir.remove();
    }
  }, 60_000);

  it.runIf(process.platform === 'linux')(
    'writes from a thread below the node’s priority',
    async () => {
      // The node's threads' nice values (Linux: /proc), once its writer thread has started (or after 2 s).
      const code = `
      const { createLogger } = await import(${JSON.stringify(logModule)});
      const { readdirSync, readFileSync } = await import('node:fs');
      const { getPriority } = await import('node:os');
      const niceValues = () => readdirSync('/proc/self/task').flatMap((tid) => {
        try {
          return [Number(readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[16])];
        } catch {
          return [];
        }
      });
      const base = getPriority();
      createLogger({ format: 'json' }).info('first');
      for (let i = 0; i < 100 && !niceValues().includes(base + ${WRITER_STEPS_BELOW}); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      process.stderr.write(JSON.stringify({ base, nice: niceValues() }));
      process.exit(0);
    `;
      const child = run(code, 'ignore');
      expect(await child.exited, child.stderr()).toBe(0);
      const { base, nice } = JSON.parse(child.stderr()) as { base: number; nice: number[] };
      expect(WRITER_STEPS_BELOW).toBeGreaterThan(0);
      expect(nice.filter((value) => value === base + WRITER_STEPS_BELOW)).toHaveLength(1);
      expect(nice.filter((value) => value === base).length).toBeGreaterThan(1);
    },
    30_000,
  );

  it('does not stop the node when its standard output is closed', async () => {
    const child = run(loggingProcess(300_000), 'pipe');
    child.child.stdout!.destroy();
    expect(await child.exited, child.stderr()).toBe(0);
  }, 60_000);
});
