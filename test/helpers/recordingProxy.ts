// A recording proxy on loopback in front of a service: every request's method and path, as a provider would
// see them, and a hook to act when one arrives (e.g. kill a client mid-upload or mid-download).
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
}

export interface RecordingProxy {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests whose method is `method` and whose path matches `path`. */
  count(method: string, path: RegExp): number;
  /**
   * Called for each request before it is forwarded, and for each chunk of an answer's body as it is passed
   * on; set to undefined to stop.
   */
  onRequest?: (request: IncomingMessage) => void;
  /** Answering true holds the rest of that answer back (the client waits, mid-download). */
  onAnswerChunk?: (request: RecordedRequest, sentBytes: number) => boolean | void;
  /**
   * Answers a request itself instead of forwarding it, when this gives an answer: a provider without one of
   * our extensions (`GET /v5/key` → 404) in front of our service.
   */
  answer?: (request: RecordedRequest) => { status: number; body: string } | undefined;
  close(): Promise<void>;
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const proxy: RecordingProxy = {
    url: '',
    requests: [],
    count: (method, path) =>
      proxy.requests.filter((request) => request.method === method && path.test(request.path)).length,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const recorded = { method: req.method ?? '', path: (req.url ?? '').split('?')[0] };
    proxy.requests.push(recorded);
    proxy.onRequest?.(req);
    const own = proxy.answer?.(recorded);
    if (own) {
      req.resume();
      res.writeHead(own.status, { 'content-type': 'text/plain' }).end(own.body);
      return;
    }
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        let sent = 0;
        answer.on('data', (chunk: Buffer) => {
          sent += chunk.length;
          res.write(chunk);
          if (proxy.onAnswerChunk?.(recorded, sent) === true) answer.pause();
        });
        answer.on('end', () => res.end());
        answer.on('error', () => res.destroy());
      },
    );
    forward.on('error', () => res.destroy());
    req.on('error', () => forward.destroy());
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    req.pipe(forward);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (proxy as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
