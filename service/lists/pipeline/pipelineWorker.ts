// The pipeline worker: plans lists (pass 1, with its own pool of verify workers) and writes their parts (pass
// 2), off the service's request thread. Started by the main thread's handle on it (node/pipelineThread.ts) of
// whichever node runs list work. A plan stays here in memory until its list is done, so the single-node
// service writes each part from it; a node writing a part of another node's plan is sent the part's stored
// rows and text instead.
import { closeSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { writeAll } from '../../fdWrite.js';
import { IdentityPass } from './identityPass.js';
import { planList, type ListPlan } from './plan.js';
import { applyOnlineVerdicts, partArena, writePart } from './partWriter.js';
import { decodePartRows, encodePartRows, partAddresses, type PartRows } from '../parts.js';
import { quoteField } from '../read/scan.js';
import type { PipelineMessage, PipelineRequest, PlanRecord, PlanReply } from '../types.js';
import { VerifierPool } from '../verify/verifierPool.js';

const port = parentPort;
if (!port) throw new Error('worker.js runs as a worker thread');
const { verifyThreads } = workerData as { verifyThreads: number };
const pool = new VerifierPool(verifyThreads);
pool.start();

const send = (message: PipelineMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
/** Plans in memory, by `<list>:<run>`. */
const plans = new Map<string, ListPlan>();
let queue = Promise.resolve();

function recordOf(plan: ListPlan, encode: boolean): PlanRecord {
  const partStarts = plan.parts.map((part) => plan.partStart(part.index));
  return {
    records: plan.records,
    head: plan.head,
    context: plan.context,
    parts: plan.parts,
    completedOffline: plan.completedOffline,
    partStarts,
    ...(encode ? { encodedRows: plan.parts.map((part) => encodePartRows(plan.partRows(part.index))) } : {}),
    ...(plan.isExtracted ? { extractedText: plan.textPath } : {}),
  };
}

/** A part's text from the list's text file, into an arena with room for its output. */
function readPartText(path: string, byteStart: number, byteEnd: number) {
  const source = partArena(byteEnd - byteStart);
  const fd = openSync(path, 'r');
  try {
    let at = 0;
    while (at < source.text.length) {
      const read = readSync(fd, source.text, at, source.text.length - at, byteStart + at);
      if (read === 0) throw new Error("the list's text is shorter than its plan says");
      at += read;
    }
  } finally {
    closeSync(fd);
  }
  return source;
}

function handle(request: PipelineRequest): Promise<void> | void {
  if (request.type === 'forget') {
    plans.get(request.key)?.close();
    plans.delete(request.key);
    return;
  }
  if (request.type === 'addresses') {
    const plan = plans.get(request.key);
    if (!plan) return send({ type: 'failed', id: request.id, reason: 'the plan of this list is not here' });
    const { addresses, rowCounts } = partAddresses(plan.partRows(request.part));
    return send({ type: 'addresses', id: request.id, addresses, rowCounts });
  }
  if (request.type === 'plan') {
    const { job } = request;
    const { key } = request;
    return (async () => {
      pool.start();
      const outcome = await planList(
        job,
        pool,
        (records, _inputCount, completed) => send({ type: 'progress', key, records, completed }),
        (services, delimiter) => send({ type: 'services', key, services, delimiter }),
      );
      // With nothing queued behind this list, the verify workers' memory is given back.
      if (!request.isMoreQueued) await pool.close();
      let reply: PlanReply;
      if (outcome.kind === 'planned') {
        plans.set(key, outcome.plan);
        reply = { kind: 'planned', record: recordOf(outcome.plan, request.encode) };
      } else reply = outcome;
      send({ type: 'planned', id: request.id, outcome: reply });
    })();
  }
  // Write a part: from the plan in memory, or from the part's stored rows and text.
  const { context, bounds } = request;
  const plan = plans.get(request.key);
  let rows: PartRows;
  let source: ReturnType<typeof partArena>;
  if (request.stored) {
    rows = decodePartRows(request.stored.rows);
    source = partArena(request.stored.text.length);
    source.text.set(request.stored.text);
  } else if (plan) {
    rows = plan.partRows(bounds.index);
    source = readPartText(plan.textPath, bounds.byteStart, bounds.byteEnd);
  } else return send({ type: 'failed', id: request.id, reason: 'the plan of this list is not here' });
  // The services other than validation, on this node's service database; a part counts its own matches.
  const identity = context.identity
    ? new IdentityPass(
        { ...context.identity.job, ...(request.identityDbPath ? { dbPath: request.identityDbPath } : {}) },
        context.identity.services,
        context.identity.columns,
        context.delimiter,
        quoteField,
      )
    : undefined;
  try {
    const addresses = request.verdicts ? partAddresses(rows) : undefined;
    if (addresses && request.verdicts) applyOnlineVerdicts(rows, addresses, request.verdicts);
    const online = addresses && request.verdicts ? { addresses, verdicts: request.verdicts } : undefined;
    if (request.outputPath) {
      // The single node's part: written here, straight from the arena into the list's folder (no copy of its
      // bytes), whole or not at all.
      const temporary = `${request.outputPath}.tmp`;
      const fd = openSync(temporary, 'w', 0o600);
      let output;
      try {
        output = writePart(context, bounds, source, rows, online, identity, (bytes) => writeAll(fd, bytes));
      } catch (error) {
        closeSync(fd);
        rmSync(temporary, { force: true });
        throw error;
      }
      closeSync(fd);
      renameSync(temporary, request.outputPath);
      const { index: _index, ...result } = output;
      send({ type: 'written', id: request.id, result: { ...result, chunks: [], isWritten: true } });
      return;
    }
    const output = writePart(context, bounds, source, rows, online, identity);
    const { index: _index, ...result } = output;
    send(
      { type: 'written', id: request.id, result },
      output.chunks.map((chunk) => chunk.buffer as ArrayBuffer),
    );
  } finally {
    identity?.close();
  }
}

port.on('message', (request: PipelineRequest) => {
  // One request at a time, in order: a plan is made before its parts are asked for.
  queue = queue.then(async () => {
    try {
      await handle(request);
    } catch (error) {
      if ('id' in request)
        send({
          type: 'failed',
          id: request.id,
          reason: error instanceof Error ? error.message : String(error),
        });
    }
  });
});
send({ type: 'ready' });
