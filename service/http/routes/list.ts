// E7–E10: list processing. The key is the `api_key` header. A list belongs to the key that submitted it;
// any other key gets 404 for it, as for a list that does not exist.
//
// E7 decides everything it can before reading the body (key, Content-Type, parameters, declared length, the
// key's quota and limits: lists in progress, bytes today, uploads arriving), in an onRequest hook, so a refused
// upload is not read first; then the body streams to disk under a byte cap.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  LIST_NAME_DEFAULT,
  type ListServiceKey,
  listFileExtension,
  purchaseRequestSchema,
  submitListQuerySchema,
  type ListFileExtension,
  type SubmitListParams,
} from '../../../shared/api/list.js';
import { RevokedKeyError, type KeyRecord } from '../../store/keys.js';
import type { ListBackend, UploadTicket } from '../../lists/backend/port.js';
import { resultsFileName } from '../../lists/names.js';
import { callbackProblemOf } from '../../lists/node/callbackTarget.js';
import type { ListProcessor } from '../../lists/node/processor.js';
import { checkPurchase, submissionServices } from '../../lists/node/purchase.js';
import type { ListRecord } from '../../lists/backend/store.js';
import { countRecords, estimateRecords, isChargedByLines } from '../../lists/node/records.js';
import { RowTooLongError } from '../../lists/read/rowWalk.js';
import { ListLimitError, oversizedUploadProblem } from '../../lists/backend/limits.js';
import { periodOf, quotaExceededMessage, type Charge, type UsageMeter } from '../../store/usage.js';
import { checkUpload, receiveUpload, tooLarge, UploadProblem } from '../../lists/node/upload.js';
import { ZipProblem } from '../../lists/read/zip.js';
import { authorise, refuseExhausted, thenMaybe, type AuthContext } from '../auth.js';
import { beforeBody, keyCheck, keyOf } from '../bodies.js';
import { HttpError, sendError, sendInvalidKey } from '../errors.js';
import { printable, singleValued } from '../params.js';
import { registerRoute } from '../routes.js';
import { ListThrottle, type ListCall } from '../throttle.js';
import { publish } from '../../ops/events.js';

export interface ListsContext {
  readonly backend: ListBackend;
  /** This node's data folder (uploads are received in the backend's work folder, on this node's disk). */
  readonly dataDir: string;
  /** The limits of uploads and files, and the pipeline worker to start while an upload arrives. */
  readonly processor: Pick<ListProcessor, 'limits' | 'maxUploadBytes' | 'callbackResolution' | 'warm'>;
  /** Quotas: a key's list is charged its records when it is accepted. */
  readonly usage: UsageMeter;
}

const LIST_CONTENT_TYPES = ['multipart/form-data', 'text/csv'] as const;
/** Room for a multipart envelope around the file (boundaries, part headers, small fields). */
const MULTIPART_OVERHEAD = 64 * 1024;

/**
 * The least bytes a list of a declared Content-Length counts against `--max-bytes-day` (the bytes of its text):
 * a text/csv body is the text; a multipart body holds the file in an envelope (room for the boundaries, part
 * headers and small fields clients send), and a zip's file is at least its compressed bytes, but for deflate's
 * framing of data that does not compress (well under 0.1%).
 */
function leastListBytes(declared: number, isMultipart: boolean): number {
  if (!isMultipart) return declared;
  return Math.max(0, declared - MULTIPART_OVERHEAD - Math.ceil(declared / 1000));
}

interface Submission {
  readonly key: KeyRecord;
  readonly params: SubmitListParams;
  /** The upload let in (counted against the key's --max-uploads). */
  readonly ticket: UploadTicket;
  readonly services: ListServiceKey[];
  readonly isExplicit: boolean;
  readonly contentType: (typeof LIST_CONTENT_TYPES)[number];
}
const submissions = new WeakMap<FastifyRequest, Submission>();

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** E7's query parameters, or an HttpError: 422 for an improper name (the spec's "improper name"), else 400. */
function submitParams(query: unknown): SubmitListParams {
  const { api_key: _key, ...raw } = singleValued(query);
  const parsed = submitListQuerySchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues;
  const nameIssue = issues.find((issue) => issue.path[0] === 'name');
  if (nameIssue)
    throw new HttpError(422, `Parameter 'name': ${nameIssue.message}; got '${printable(raw.name ?? '')}'.`);
  throw new HttpError(
    400,
    issues
      .slice(0, 3)
      .map((issue) => {
        const name = String(issue.path[0] ?? 'parameters');
        const value = raw[name];
        return `Parameter '${printable(name)}': ${issue.message}${value !== undefined ? `; got '${printable(value)}'` : ''}.`;
      })
      .join(' '),
  );
}

function listIdOf(request: FastifyRequest): number {
  const raw = (request.params as { list_id?: string }).list_id ?? '';
  const id = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw new HttpError(404, `List '${printable(raw)}' not found.`);
  return id;
}

/** The key's own list, or a 404 (another key's list is as unknown as one that does not exist). */
async function ownList(backend: ListBackend, key: KeyRecord, id: number): Promise<ListRecord> {
  const list = await backend.getList(id);
  if (!list || list.keyId !== key.id) throw new HttpError(404, `List ${id} not found.`);
  return list;
}

/** `attachment; filename=<name>` as the spec writes it, with an RFC 6266 `filename*` for other characters. */
export function contentDisposition(fileName: string): string {
  if (/^[\w.()+ -]+$/.test(fileName) && !fileName.startsWith(' ')) return `attachment; filename=${fileName}`;

  const fallback = fileName.replace(/[^\x20-\x7e]|["\\;/]/g, '_');
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

const RESULT_TYPES: Record<ListFileExtension, string> = {
  '.csv': 'text/csv; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.zip': 'application/zip',
};

export function registerLists(app: FastifyInstance, auth: AuthContext, context: ListsContext): void {
  const { backend, processor, usage } = context;

  // Bodies of E7: a multipart part streamed by @fastify/multipart, or a text/csv body as the raw stream. Any
  // other route gets either as its raw stream too (and refuses it); multipart's parser is E7's alone (below).
  app.addContentTypeParser(['text/csv', 'multipart/form-data'], (_request, payload, done) =>
    done(null, payload),
  );

  // E7's checks before its body is read: a hook of this route alone (one of the whole service would run on
  // every request, E1's too).
  const checkSubmission = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = await authorise(auth, request, reply, 'header', null, { rateLimited: false });
    if (!key) return reply;
    const type = mediaType(request);
    const contentType = LIST_CONTENT_TYPES.find((t) => t === type);
    if (!contentType)
      return sendError(
        reply,
        415,
        `Content-Type must be multipart/form-data (the list in a part named 'file') or text/csv (the list as the body); ` +
          `got '${printable(type || 'none')}'.`,
      );
    const params = submitParams(request.query);
    const services = submissionServices(key, params);
    if (!services.ok) return sendError(reply, services.status, services.message);
    const declared = Number(request.headers['content-length']);
    const isMultipart = contentType === 'multipart/form-data';
    const allowance = processor.maxUploadBytes + (isMultipart ? MULTIPART_OVERHEAD : 0);
    if (Number.isFinite(declared) && declared > allowance) {
      const problem = tooLarge(processor.maxUploadBytes);
      reply.header('connection', 'close');
      return sendError(reply, problem.status, problem.message);
    }
    // The key's quota and limits, before the body and before its callback's name is resolved: a key refused
    // costs no more than these questions (and its connection is closed, its body unread).
    if (await refuseExhausted(auth, key, reply, 'records')) return reply;
    let ticket: UploadTicket;
    try {
      const leastBytes = Number.isFinite(declared) ? leastListBytes(declared, isMultipart) : 0;
      const isExact = Number.isFinite(declared) && !isMultipart;
      // An upload larger than the key's whole day is refused without asking the store (a team server's
      // beginUpload is a transaction of several queries).
      const oversized = oversizedUploadProblem(key, leastBytes, isExact);
      if (oversized) throw oversized;
      ticket = await backend.beginUpload({ keyId: key.id, limits: key, leastBytes, isExact });
    } catch (error) {
      if (!(error instanceof ListLimitError)) throw error;
      reply.header('retry-after', String(error.retryAfterSeconds));
      reply.header('connection', 'close');
      return sendError(reply, 429, error.message);
    }
    // The upload counts against the key's --max-uploads until it is a list, or its answer is sent, or its client
    // has gone.
    reply.raw.once('close', () => ticket.end());
    const callbackProblem = await callbackProblemOf(params, processor);
    if (callbackProblem) return sendError(reply, 400, `Parameter 'callback_url': ${callbackProblem}`);
    submissions.set(request, {
      key,
      params,
      ticket,
      contentType,
      services: services.value.services,
      isExplicit: services.value.isExplicit,
    });
    // The pipeline worker starts while the file arrives.
    processor.warm();
  };

  // E7: submit a list.
  const submitList = async (request: FastifyRequest, reply: FastifyReply) => {
    const submission = submissions.get(request);
    if (!submission) throw new HttpError(500, 'The list submission was not prepared.');
    const { key, params, ticket, contentType, services, isExplicit } = submission;
    let source: Readable;
    let fileName: string | undefined;
    if (contentType === 'multipart/form-data') {
      const part = await request.file({
        limits: { fileSize: processor.maxUploadBytes, files: 1, fields: 20, parts: 40, fieldSize: 64 * 1024 },
      });
      if (!part)
        throw new HttpError(400, "The multipart body has no file: send the list in a part named 'file'.");
      if (part.fieldname !== 'file') {
        part.file.resume();
        throw new HttpError(
          400,
          `The list must be in a part named 'file'; got a part named '${printable(part.fieldname)}'.`,
        );
      }
      source = part.file;
      fileName = part.filename ? (part.filename.split(/[/\\]/).pop() ?? '') : '';
    } else {
      source = request.body as Readable;
    }
    const name = params.name ?? (fileName ? fileName : LIST_NAME_DEFAULT);
    const extension = listFileExtension(name);
    if (!extension) {
      throw new HttpError(
        422,
        `The file name '${printable(name)}' must end in .txt, .csv or .zip (or give the parameter 'name').`,
      );
    }
    if (contentType === 'text/csv' && extension === '.zip')
      throw new HttpError(422, 'A .zip list is sent as multipart/form-data, not as a text/csv body.');

    // In this node's own work folder: a node starting removes only those of nodes that are gone (workFolder.ts).
    const uploadsDir = join(backend.workRoot, 'uploads');
    mkdirSync(uploadsDir, { recursive: true, mode: 0o700 });
    let upload;
    let checked: Awaited<ReturnType<typeof checkUpload>>;
    // A key without a quota is charged the file's lines (estimateRecords): counted as the bytes arrive.
    const isByLines = isChargedByLines(Boolean(key.quota), name);
    try {
      upload = await receiveUpload(source, uploadsDir, processor.maxUploadBytes, { countLines: isByLines });
      checked = await checkUpload(upload, extension, processor.limits);
    } catch (error) {
      if (upload) rmSync(upload.path, { force: true });
      if (error instanceof UploadProblem) {
        if (error.status === 413) reply.header('connection', 'close');
        throw new HttpError(error.status, error.message);
      }
      throw error;
    }
    // The list's records are charged to the key now, all or none: a list larger than what a key with a quota
    // has left is refused here (403), never cut in the middle; a key without one is counted too. (Its count is
    // settled when the list completes, in the period charged.)
    let records: number;
    try {
      // Exactly for a key with a quota (it decides the 403) and for a zip; by its lines, in passing, for the
      // others (their usage, settled when the list ends with the records found).
      records = isByLines
        ? await estimateRecords(upload.path, params, upload.lines)
        : await countRecords(upload.path, name, params, processor.limits, checked.zipEntry);
    } catch (error) {
      // (A row past the plan's limit, in a zip or counted exactly: refused now, in the plan's words.)
      if (error instanceof ZipProblem || error instanceof RowTooLongError) {
        rmSync(upload.path, { force: true });
        throw new HttpError(422, error.message);
      }
      // A file that cannot be read through (an archive whose entry lies about its size, …) is accepted
      // uncounted: its plan finds it Invalid, in words, and its count is settled then.
      records = 0;
    }
    let charge: Charge;
    if (key.quota) {
      charge = await usage.charge(key, records);
      if (!charge.ok) {
        rmSync(upload.path, { force: true });
        publish('quota.refused', { keyId: key.id });
        throw new HttpError(403, quotaExceededMessage(key.quota, charge.used, records, 'records'));
      }
    } else {
      // Written at once (not with E1's counts, a second later), so that a refund never comes before it.
      charge = { ok: true, period: periodOf('total') };
      await usage.adjust(key.id, null, records, charge.period);
    }
    const reserved = records;
    let listId: number;
    try {
      listId = await backend.createList({
        keyId: key.id,
        name,
        options: params,
        services,
        servicesExplicit: isExplicit,
        uploadPath: upload.path,
        sizeBytes: upload.size,
        textBytes: checked.textBytes,
        upload: ticket,
        inputFile: `input${extension}`,
        reservedRecords: reserved,
        chargedPeriod: charge.period,
        limits: key,
      });
    } catch (error) {
      if (reserved > 0) await usage.adjust(key.id, key.quota, -reserved, charge.period);
      if (error instanceof RevokedKeyError) return sendInvalidKey(reply);
      // A limit of the key (lists in progress, bytes a day): 429, when to try again, and why.
      if (error instanceof ListLimitError) {
        reply.header('retry-after', String(error.retryAfterSeconds));
        throw new HttpError(429, error.message);
      }
      throw error;
    } finally {
      rmSync(upload.path, { force: true });
    }
    publish('list', { event: 'accepted', listId, keyId: key.id, status: 'Pending' });
    const base = `${request.protocol}://${request.host}`;
    return reply
      .code(202)
      .header('location', `${base}/v5/list/${listId}`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ list_id: listId, size_bytes: upload.size }));
  };
  // @fastify/multipart hooks every request of the context it is registered in (an async onRequest and an async
  // onResponse hook: promises, a listener and microtasks, about 3 µs of each E1 request): it and E7 get a
  // context of their own.
  void app.register(async (upload) => {
    upload.removeContentTypeParser('multipart/form-data');
    await upload.register(multipart);
    // Refused before its body, or given as long as it takes while its bytes keep coming (service/http/bodies.ts).
    registerRoute(upload, 'POST', '/v5/list', submitList, {
      onRequest: beforeBody(upload, checkSubmission, 'progress'),
    });
  });

  // E8–E10, finish and explain: the key, then its allowance of that kind of call on this node (429 past it).
  const throttle = new ListThrottle();
  const keyFor = (request: FastifyRequest, reply: FastifyReply, call: ListCall) =>
    thenMaybe(authorise(auth, request, reply, 'header', null, { rateLimited: false }), (key) =>
      key && throttle.admit(key, call, reply) ? key : undefined,
    );

  // E8: the status document.
  registerRoute(app, 'GET', '/v5/list/:list_id', async (request, reply) => {
    const key = await keyFor(request, reply, 'status');
    if (!key) return reply;
    const list = await ownList(backend, key, listIdOf(request));
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(await backend.document(list)));
  });

  // Purchase and finish check their key and their body's type before the body is read (service/http/bodies.ts);
  // the handler takes the key with keyOf.
  const keyBeforeBody = keyCheck(auth, 'header', { rateLimited: false }, (key, reply) =>
    throttle.admit(key, 'change', reply),
  );

  // E9: purchase. A report-only list awaiting purchase (Processed) runs again with what is bought; a list
  // with Results has nothing more to buy: the answer is its status document, as it is.
  const checkPurchaseRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    await keyBeforeBody(request, reply);
    if (reply.sent) return;
    const type = mediaType(request);
    if (type !== '' && type !== 'application/json')
      sendError(
        reply,
        415,
        `The purchase body is JSON (Content-Type: application/json); got '${printable(type)}'.`,
      );
  };
  const purchase = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = keyOf(request);
    const body = purchaseRequestSchema.safeParse(request.body ?? {});
    if (!body.success) {
      const issue = body.error.issues[0];
      throw new HttpError(
        400,
        `Invalid purchase body: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'not understood'}.`,
      );
    }
    const list = await ownList(backend, key, listIdOf(request));
    if (list.status === 'Processed') {
      const purchase = checkPurchase(key, list, body.data);
      if (!purchase.ok) throw new HttpError(purchase.status, purchase.message);
      await backend.markPurchased(list.id, purchase.value);
      const bought = (await backend.getList(list.id)) ?? list;
      return reply
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(await backend.document(bought)));
    }
    if (list.status !== 'Results') {
      const why =
        list.status === 'Invalid' || list.status === 'Error'
          ? `its status is ${list.status}, so it has no results to purchase`
          : `it is not complete yet (status ${list.status}); purchase once its status is Results`;
      throw new HttpError(404, `List ${list.id} cannot be purchased: ${why}.`);
    }
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(await backend.document(list)));
  };
  registerRoute(app, 'POST', '/v5/list/:list_id/purchase', purchase, {
    onRequest: beforeBody(app, checkPurchaseRequest),
  });

  // Finish now (a Mailsieve extension): a list waiting for a retry of temporary failures stops waiting; those
  // rows stay unknown (5). The answer is the status document.
  const finish = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = keyOf(request);
    if (typeof (request.body as Readable | undefined)?.resume === 'function')
      (request.body as Readable).resume();
    const list = await ownList(backend, key, listIdOf(request));
    if (list.status !== 'Processing' && list.status !== 'Pending')
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(await backend.document(list)));
    if (!(await backend.finishNow(list.id)))
      throw new HttpError(
        409,
        `List ${list.id} has no online checks to finish: it runs with ${list.checks ?? 'offline'} checks.`,
      );
    const after = (await backend.getList(list.id)) ?? list;
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(await backend.document(after)));
  };
  registerRoute(app, 'POST', '/v5/list/:list_id/finish', finish, {
    onRequest: beforeBody(app, keyBeforeBody),
  });

  // Why, per row (a Mailsieve extension): for a list with online checks, a CSV of each row's address, status
  // code, how far its check went and what answered. Kept with the list.
  registerRoute(app, 'GET', '/v5/list/:list_id/explain', async (request, reply) => {
    const key = await keyFor(request, reply, 'download');
    if (!key) return reply;
    const list = await ownList(backend, key, listIdOf(request));
    const explain = await backend.explain(list);
    if (list.status !== 'Results' || !explain)
      throw new HttpError(
        404,
        list.status !== 'Results'
          ? `List ${list.id} has no explanations${list.status === 'Invalid' || list.status === 'Error' ? '' : ' yet'}: its status is ${list.status}.`
          : `List ${list.id} ran with ${list.checks ?? 'offline'} checks: each row's Status Code says why (no DNS or mail server was asked).`,
      );
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-length', String(explain.size))
      .header(
        'content-disposition',
        contentDisposition(`${list.name.replace(/\.(csv|txt|zip)$/i, '')}-${list.id}-explain.csv`),
      )
      .send(explain.open());
  });

  // E10: the results file, once complete.
  registerRoute(app, 'GET', '/v5/list/:list_id/results', async (request, reply) => {
    const key = await keyFor(request, reply, 'download');
    if (!key) return reply;
    const list = await ownList(backend, key, listIdOf(request));
    const results = list.status === 'Results' ? await backend.results(list) : undefined;
    if (list.status !== 'Results' || !results) {
      throw new HttpError(
        404,
        list.status === 'Results'
          ? `The results file of list ${list.id} is missing.`
          : list.status === 'Processed'
            ? `List ${list.id} is waiting for purchase: its match reports are in its status document; buy its results with POST /v5/list/${list.id}/purchase.`
            : `List ${list.id} has no results${list.status === 'Invalid' || list.status === 'Error' ? '' : ' yet'}: its status is ${list.status}.`,
      );
    }
    const extension = listFileExtension(list.name) ?? '.csv';
    return reply
      .header('content-type', RESULT_TYPES[extension])
      .header('content-length', String(results.size))
      .header('content-disposition', contentDisposition(resultsFileName(list.name, list.id, list.services)))
      .send(results.open());
  });
}
