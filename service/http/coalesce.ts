// The answers a node's HTTP server ends in one turn of the event loop are handed to the system together, at the
// turn's end, rather than one by one as each is ended.
//
// Why: a client on the same machine (nginx in front of a node, a load balancer's health checks, the benches'
// wrk) sleeps in the system until an answer arrives, and each answer written while it sleeps costs the node's
// write the wake-up of the client's thread, on this virtual machine several µs of the node's own CPU (an
// inter-processor interrupt through the hypervisor: `perf` puts it under `sock_def_readable`). Node writes an
// answer as soon as `end()` is called, so under load (many connections ready in one turn) the node paid that
// wake-up for nearly every answer. Held to the turn's end, the first write wakes the client and the others
// find it awake. `npm run bench -- e1` (32 connections): E1 from 64% of the bare Fastify route's requests/s to
// 87–88%, its quiet twin from 67% to 98–101%; at one connection unchanged (a turn then has one answer, written
// at once). Docs: docs/service.md, "E1's speed".
//
// How: Node's `ServerResponse.end()` corks the connection, writes the answer into it, then uncorks it fully
// (`corked = 1`, then `uncork()`), which writes. The connection's `uncork` is replaced by one that, at that last
// uncork, leaves the connection corked and notes it; all noted connections are uncorked in a `setImmediate` of
// the turn (after the turn's I/O callbacks). The end of the answer's stream waits for that uncork as for any
// write, so its 'finish', keep-alive and `Connection: close` are unchanged.
// Not held: a connection with HOLD_MAX_BYTES or more waiting (a streamed results file's chunks go at once), one
// whose client pipelines its requests (see Hold), one destroyed meanwhile (what it held is dropped, as on any
// destroyed connection). Before writing an answer of its own and destroying the connection, code calls
// releaseWrites (app.ts's raw errors).
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { Server as TlsServer } from 'node:tls';

/** A connection with at least this much waiting to be written is not held (a chunk of a streamed file). */
const HOLD_MAX_BYTES = 64 * 1024;

/** A connection's own uncork (Node's), which writes what it holds at the last. */
function uncork(socket: Socket): void {
  Writable.prototype.uncork.call(socket);
}

/** What a connection holds. */
interface Hold {
  /** Its answers are held to the turn's end. */
  isHeld: boolean;
  /**
   * Its client sent a request before the answer to the one before was written (pipelining): the connection's
   * answers are written at once until a request arrives with none waiting before it. Node writes a pipelined
   * request's answer only when the one before is written, so held, they would go one a turn, and a client that
   * closes its side after sending them (Node then ends the connection) would lose the last.
   */
  isPipelined: boolean;
}

const kHold = Symbol('held writes');
type HoldingSocket = Socket & { [kHold]?: Hold };

/** Uncorks each held connection (its last uncork, which writes what it holds). */
class HeldWrites {
  private held: HoldingSocket[] = [];
  private readonly flush = () => {
    const held = this.held;
    this.held = [];
    for (const socket of held) releaseWrites(socket);
  };

  hold(socket: HoldingSocket): void {
    if (this.held.push(socket) === 1) setImmediate(this.flush);
  }
}

/**
 * Writes now what a connection holds (its answers of this turn): before an answer written on the connection
 * itself, then destroyed.
 */
export function releaseWrites(socket: Socket): void {
  const hold = (socket as HoldingSocket)[kHold];
  if (hold === undefined || !hold.isHeld) return;
  hold.isHeld = false;
  if (!socket.destroyed && socket.writableCorked > 0) uncork(socket);
}

/** Holds the answers `server`'s connections end to the end of the turn (see the file's header). */
export function coalesceWrites(server: HttpServer | HttpsServer): void {
  const writes = new HeldWrites();
  function heldUncork(this: HoldingSocket): void {
    const hold = this[kHold]!;
    // Not the last uncork (of a cork within one, held or not): undone as Node does, nothing written yet.
    if (this.writableCorked !== 1) return uncork(this);
    // Held already: the turn's end writes it.
    if (hold.isHeld) return;
    if (hold.isPipelined || this.writableLength >= HOLD_MAX_BYTES || this.destroyed) return uncork(this);
    hold.isHeld = true;
    writes.hold(this);
  }
  // An HTTPS server's answers are written to the TLS connection, made once its handshake is done.
  server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (socket: HoldingSocket) => {
    socket[kHold] = { isHeld: false, isPipelined: false };
    socket.uncork = heldUncork;
  });
  // A response waiting for the connection (no socket yet) answers a pipelined request.
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket as HoldingSocket;
    const hold = socket[kHold];
    if (hold === undefined) return;
    hold.isPipelined = response.socket === null;
    if (hold.isPipelined) releaseWrites(socket);
  });
}
