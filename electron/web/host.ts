// Browser mode's host: the desktop contract over loopback HTTP, core events as server-sent events, and the
// built renderer as static files. Bound to 127.0.0.1 only. A launch token — single-use, valid for 60 s, never
// on a command line (the browser opens a launch file only the user can read) — is exchanged at /launch for a
// session cookie holding a separate random secret (HttpOnly, SameSite=Strict), which guards every /api
// route; the Host header must name this server (DNS rebinding) and state-changing requests must carry a
// custom header and come from this origin (CSRF).
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { EVENT_NAMES, type Reply } from '../../shared/desktop/contract.js';
import type { DesktopCore } from '../core/desktop.js';
import { notAListFile } from '../../shared/fileName.js';
import { formatOf } from '../core/files/source.js';

export const SESSION_COOKIE = 'mailsieve_session';
/** Every POST carries this header: a cross-site page cannot send it without a CORS preflight we never answer. */
export const REQUEST_HEADER = 'x-mailsieve-request';
const MAX_JSON_BYTES = 1024 * 1024;

/** The renderer's CSP: nothing but this origin; no inline script, no eval. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export interface WebHostOptions {
  readonly core: DesktopCore;
  /** The built renderer (dist/renderer). */
  readonly rendererDir: string;
  readonly port?: number;
  /** How long a launch token stays valid; 60 s (shorter in tests). */
  readonly launchTtlMs?: number;
}

export interface WebHost {
  readonly server: Server;
  readonly origin: string;
  /**
   * A new address that opens the app once: it trades its token for a session cookie at the first request,
   * within `launchTtlMs` of now. Keep it off command lines: `writeLaunchFile` is how a browser gets it.
   */
  newLaunchUrl(): string;
  /**
   * Writes a page that forwards to a new launch address into `dir` (made 0700; the page 0600, removed when its
   * token is used or expires) and returns its path: a browser can open it without the token on its command
   * line, where every local user could read it.
   */
  writeLaunchFile(dir: string): string;
  close(): Promise<void>;
}

export const LAUNCH_TTL_MS = 60_000;

/** Tokens and session secrets are looked up by their SHA-256: no timing of a comparison tells their bytes. */
const digest = (secret: string) => createHash('sha256').update(secret).digest('base64url');

function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

function send(
  response: ServerResponse,
  status: number,
  body: string,
  type = 'application/json; charset=utf-8',
): void {
  response.writeHead(status, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}

function sendReply(response: ServerResponse, status: number, reply: Reply<unknown>): void {
  send(response, status, JSON.stringify(reply));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request) {
    length += (chunk as Buffer).length;
    if (length > MAX_JSON_BYTES) throw new Error('The request body is too large.');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as unknown);
}

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><body><h1>${title}</h1><p>${text}</p></body></html>`;

export async function startWebHost(options: WebHostOptions): Promise<WebHost> {
  const { core } = options;
  const launchTtlMs = options.launchTtlMs ?? LAUNCH_TTL_MS;
  /** Launch tokens by digest: their expiry, and the launch file to remove once used or expired. */
  const launches = new Map<string, { expiresAt: number; file?: string; timer: NodeJS.Timeout }>();
  /** Digests of tokens already traded, to tell a reused link from an unknown one. */
  const usedLaunches = new Set<string>();
  const sessions = new Set<string>();
  const rendererRoot = normalize(options.rendererDir + sep);
  const eventStreams = new Set<ServerResponse>();
  let origin = '';
  let allowedHosts = new Set<string>();

  const unsubscribe = core.on((event, payload) => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
    for (const stream of eventStreams) stream.write(frame);
  });

  const isAuthorised = (request: IncomingMessage) => {
    const cookie = cookieOf(request, SESSION_COOKIE);
    return cookie !== undefined && sessions.has(digest(cookie));
  };

  const forgetLaunch = (key: string) => {
    const launch = launches.get(key);
    if (!launch) return;
    clearTimeout(launch.timer);
    if (launch.file) rmSync(launch.file, { force: true });
    launches.delete(key);
  };

  const mintLaunch = (file?: string): string => {
    const token = randomBytes(32).toString('base64url');
    const key = digest(token);
    const timer = setTimeout(() => forgetLaunch(key), launchTtlMs);
    timer.unref();
    launches.set(key, { expiresAt: Date.now() + launchTtlMs, timer, ...(file ? { file } : {}) });
    return `${origin}/launch?token=${token}`;
  };

  /** Trades a launch token for a new session secret, or says in words why it cannot. */
  const launch = (token: string): { ok: true; session: string } | { ok: false; message: string } => {
    const key = digest(token);
    const found = launches.get(key);
    forgetLaunch(key);
    if (found && Date.now() <= found.expiresAt) {
      usedLaunches.add(key);
      const session = randomBytes(32).toString('base64url');
      sessions.add(digest(session));
      return { ok: true, session };
    }
    if (usedLaunches.has(key))
      return {
        ok: false,
        message:
          'This launch link was already used: each link opens Mailsieve once. Use the window it opened, or start Mailsieve again for a new link.',
      };
    return {
      ok: false,
      message: `This launch link has expired or is not one of this Mailsieve's: links work once, within ${Math.round(launchTtlMs / 1000)} seconds. Start Mailsieve again for a new link.`,
    };
  };

  const unauthorised = (response: ServerResponse) =>
    sendReply(response, 401, {
      ok: false,
      error: {
        code: 'unauthorised',
        message:
          'This window is not signed in to this run of Mailsieve: open it from the window Mailsieve opened, or start Mailsieve again.',
      },
    });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!allowedHosts.has(request.headers.host ?? '')) return send(response, 421, '{"error":"wrong host"}');
    const url = new URL(request.url ?? '/', origin);
    const path = url.pathname;

    if (path === '/launch' && request.method === 'GET') {
      const traded = launch(url.searchParams.get('token') ?? '');
      if (!traded.ok)
        return send(
          response,
          403,
          page('Mailsieve: this link no longer opens the app', traded.message),
          'text/html; charset=utf-8',
        );
      response.writeHead(303, {
        location: '/',
        'set-cookie': `${SESSION_COOKIE}=${traded.session}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      });
      response.end();
      return;
    }

    if (path.startsWith('/api/')) {
      if (!isAuthorised(request)) return unauthorised(response);
      if (request.method === 'POST') {
        const requestOrigin = request.headers.origin;
        if (
          request.headers[REQUEST_HEADER] !== '1' ||
          (requestOrigin !== undefined && requestOrigin !== origin)
        )
          return sendReply(response, 403, {
            ok: false,
            error: { code: 'forbidden', message: 'Cross-site request refused.' },
          });
      }
      if (path === '/api/events' && request.method === 'GET') {
        response.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'keep-alive',
          'x-content-type-options': 'nosniff',
        });
        response.write(`retry: 1000\nevent: ready\ndata: ${JSON.stringify({ events: EVENT_NAMES })}\n\n`);
        eventStreams.add(response);
        const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), 15_000);
        request.once('close', () => {
          clearInterval(keepAlive);
          eventStreams.delete(response);
        });
        return;
      }
      const call = /^\/api\/call\/([a-z]+:[a-z-]+)$/.exec(path);
      if (call && request.method === 'POST') {
        let input: unknown;
        try {
          input = await readJson(request);
        } catch (error) {
          return sendReply(response, 400, {
            ok: false,
            error: { code: 'invalid-input', message: (error as Error).message },
          });
        }
        return sendReply(response, 200, await core.handle(call[1], input));
      }
      if (path === '/api/files' && request.method === 'POST') {
        const name = url.searchParams.get('name') ?? '';
        // The one list of formats the app reads (.xlsx too: converted to CSV locally).
        if (!formatOf(name))
          return sendReply(response, 200, {
            ok: false,
            error: {
              code: 'file-unreadable',
              message: notAListFile(name),
            },
          });
        const target = core.stagingPathFor(name);
        try {
          await pipeline(request, createWriteStream(target.path, { mode: 0o600 }));
        } catch {
          rmSync(target.path, { force: true });
          return sendReply(response, 200, {
            ok: false,
            error: { code: 'file-unreadable', message: 'The upload of the file was interrupted.' },
          });
        }
        return sendReply(response, 200, {
          ok: true,
          value: core.registerStaged(target.fileId, target.path, name),
        });
      }
      const download = /^\/api\/exports\/(\d+)$/.exec(path);
      if (download && request.method === 'GET') {
        const file = core.exportFile(Number(download[1]));
        if (!file)
          return sendReply(response, 404, {
            ok: false,
            error: { code: 'not-found', message: 'That export is gone.' },
          });
        response.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': statSync(file.path).size,
          'content-disposition': `attachment; filename="${file.fileName.replace(/[^\w.\- ()+]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(file.fileName)}`,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        await pipeline(createReadStream(file.path), response);
        return;
      }
      return sendReply(response, 404, {
        ok: false,
        error: { code: 'not-found', message: `No such route: ${path}` },
      });
    }

    if (request.method !== 'GET' && request.method !== 'HEAD')
      return send(response, 405, '{"error":"method not allowed"}');
    // Static files of the renderer; any other path is the app (index.html).
    const relative = path === '/' ? 'index.html' : decodeURIComponent(path.slice(1));
    let file = normalize(join(rendererRoot, relative));
    if (!file.startsWith(rendererRoot) || !existsSync(file) || !statSync(file).isFile())
      file = join(rendererRoot, 'index.html');
    if (!existsSync(file))
      return send(
        response,
        500,
        'The renderer is not built: run npm run build.',
        'text/plain; charset=utf-8',
      );
    const isAsset = relative.startsWith('assets/');
    response.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': statSync(file).size,
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': isAsset ? 'public, max-age=31536000, immutable' : 'no-store',
    });
    if (request.method === 'HEAD') return void response.end();
    await pipeline(createReadStream(file), response);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendReply(response, 500, {
          ok: false,
          error: { code: 'internal', message: (error as Error).message },
        });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  allowedHosts = new Set([`127.0.0.1:${port}`]);
  return {
    server,
    origin,
    newLaunchUrl: () => mintLaunch(),
    writeLaunchFile(dir: string) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      const file = join(dir, `launch-${randomBytes(8).toString('hex')}.html`);
      const target = mintLaunch(file);
      writeFileSync(
        file,
        `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
          `<meta http-equiv="refresh" content="0;url=${target}"><title>Opening Mailsieve…</title>` +
          `<body><p>Opening Mailsieve…</p></body></html>\n`,
        { mode: 0o600 },
      );
      return file;
    },
    async close() {
      for (const key of [...launches.keys()]) forgetLaunch(key);
      unsubscribe();
      for (const stream of eventStreams) stream.end();
      eventStreams.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
