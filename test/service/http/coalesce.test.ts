import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer, get as httpsGet } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { coalesceWrites, releaseWrites } from '../../../service/http/coalesce.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A server answering with `handler`, its answers coalesced (or not). */
function serve(handler: RequestListener, isCoalesced = true): Promise<number> {
  const server = createServer(handler);
  if (isCoalesced) coalesceWrites(server);
  return listen(server);
}

/** Raw bytes on a fresh connection, half-closed after them; what comes back before the server closes it. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.end(bytes);
  });
}

/** Whether the connection holds what it was given: after `end()`, and at the end of the turn. */
type Corked = { afterEnd: number; atTurnEnd: number };

/** A handler that ends each answer with its URL and notes its connection's cork count then and at the turn's end. */
function noting(corked: Corked[]): RequestListener {
  return (request, response) => {
    response.end(`answer ${request.url}`);
    const socket = request.socket;
    const entry = { afterEnd: socket.writableCorked, atTurnEnd: -1 };
    corked.push(entry);
    setImmediate(() => (entry.atTurnEnd = socket.writableCorked));
  };
}

describe('coalesceWrites: the answers of a turn written at its end', () => {
  it('holds an ended answer to the end of the turn, where Node alone writes it at once', async () => {
    for (const isCoalesced of [true, false]) {
      const corked: Corked[] = [];
      const port = await serve(noting(corked), isCoalesced);
      const response = await fetch(`http://127.0.0.1:${port}/one`);
      expect(await response.text()).toBe('answer /one');
      expect(corked).toEqual([{ afterEnd: isCoalesced ? 1 : 0, atTurnEnd: 0 }]);
    }
  });

  it('gives each of many connections at once its own answer', async () => {
    const corked: Corked[] = [];
    const port = await serve(noting(corked));
    const paths = Array.from({ length: 64 }, (_, i) => `/request-${i}`);
    const answers = await Promise.all(
      paths.map((path) => fetch(`http://127.0.0.1:${port}${path}`).then((response) => response.text())),
    );
    expect(answers).toEqual(paths.map((path) => `answer ${path}`));
    expect(corked.every((entry) => entry.afterEnd === 1 && entry.atTurnEnd === 0)).toBe(true);
  });

  it('answers pipelined requests in order, all of them, when the client closes its side after them', async () => {
    const port = await serve((request, response) => response.end(`answer ${request.url}`));
    const requests = ['/1', '/2', '/3', '/4'].map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const answers = await raw(port, requests.join(''));
    expect(answers.match(/answer \/\d/g)).toEqual(['answer /1', 'answer /2', 'answer /3', 'answer /4']);
  });

  it('writes a large answer at once and whole, and a streamed one whole', async () => {
    const large = Buffer.alloc(1024 * 1024, 'a');
    const corked: number[] = [];
    const port = await serve((request, response) => {
      if (request.url === '/large') {
        response.end(large);
        corked.push(request.socket.writableCorked);
        return;
      }
      let chunks = 0;
      const more = () => {
        while (chunks < 40) {
          chunks++;
          if (!response.write(Buffer.alloc(100_000, 'b'))) return void response.once('drain', more);
        }
        response.end();
      };
      more();
    });
    const largeAnswer = Buffer.from(await (await fetch(`http://127.0.0.1:${port}/large`)).arrayBuffer());
    expect(largeAnswer.equals(large)).toBe(true);
    expect(corked).toEqual([0]);
    const streamed = Buffer.from(await (await fetch(`http://127.0.0.1:${port}/streamed`)).arrayBuffer());
    expect(streamed.length).toBe(4_000_000);
    expect(streamed.every((byte) => byte === 'b'.charCodeAt(0))).toBe(true);
  });

  it('closes a `Connection: close` answer after its last byte', async () => {
    const port = await serve((_request, response) => {
      response.setHeader('connection', 'close');
      response.end('last');
    });
    const answer = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.endsWith('\r\n\r\nlast')).toBe(true);
  });

  it('writes a held answer whose connection is corked and uncorked again in the turn', async () => {
    const port = await serve((request, response) => {
      response.end('held, then corked again');
      request.socket.cork();
      request.socket.uncork();
    });
    const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5000) });
    expect(await response.text()).toBe('held, then corked again');
  });

  it('releaseWrites writes a held answer at once, before the connection is destroyed', async () => {
    const port = await serve((request, response) => {
      response.end('written before the end');
      releaseWrites(request.socket);
      request.socket.destroy();
    });
    const answer = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.endsWith('\r\n\r\nwritten before the end')).toBe(true);
  });

  it('holds an HTTPS server’s answers on its TLS connections', async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    const corked: Corked[] = [];
    const server = createHttpsServer({ key: pems.private, cert: pems.cert }, noting(corked));
    coalesceWrites(server);
    const port = await listen(server);
    const answer = await new Promise<string>((resolve, reject) => {
      httpsGet(`https://127.0.0.1:${port}/secure`, { rejectUnauthorized: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(text));
      }).on('error', reject);
    });
    expect(answer).toBe('answer /secure');
    expect(corked).toEqual([{ afterEnd: 1, atTurnEnd: 0 }]);
  });
});
