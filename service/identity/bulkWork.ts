// The work of the bulk endpoints E4 (`POST /v5/eppend/bulk`) and E6 (`POST /v5/ei/bulk`): the body's records
// parsed, each answered from the reference data, and the whole answer as JSON bytes. Thousands of lookups and
// a multi-megabyte JSON text take a hundred milliseconds or more, so this runs in a bulk worker
// (bulkWorker.ts, through bulkPool.ts), never on the request thread.
import type { PersonQuery } from '../../shared/api/bulk.js';
import {
  DUPLICATE_IDENTIFIERS,
  INVALID_EMAIL_PARAMETER,
  INVALID_IDENTIFIER,
  recordError,
} from '../../shared/api/errors.js';
import { HttpError } from '../requestError.js';
import { parseBulkText, type BulkElement } from './bulkRecords.js';
import {
  blankEmailError,
  hasEmailRoute,
  identityBulkAnswer,
  intelligenceAnswerJson,
  isErrorAnswer,
  isWholeFieldSet,
} from './answers.js';
import { canonicalEmail, digestHex, md5Of } from './normalise.js';
import type { IdentityPolicy, IntelligencePolicy, KeyAccess } from './policy.js';
import { recordPolicies } from './requestPolicy.js';
import type { IdentityStore, ReadAheadKeys } from './store.js';

export type BulkTask =
  | {
      readonly kind: 'identity';
      readonly body: string;
      readonly limit: number;
      readonly policy: IdentityPolicy;
    }
  | {
      readonly kind: 'intelligence';
      readonly body: string;
      readonly limit: number;
      readonly policy: IntelligencePolicy;
      /** The key's access, for records that name their own `fields`. */
      readonly key: KeyAccess;
      readonly isActivityMetrics: boolean;
      /** Unix seconds the activity windows end at (the request's arrival). */
      readonly nowS: number;
    };

/**
 * The answer of a bulk request: its JSON as UTF-8 bytes and the records answered from the data (what the key
 * is charged: every element but the per-record errors), or a request-level error.
 */
export type BulkOutcome =
  | { readonly ok: true; readonly json: Uint8Array; readonly answered: number }
  | { readonly ok: false; readonly status: number; readonly message: string };

/** A per-record error's JSON text begins so (recordError's first member); an answer's never does. */
const ERROR_JSON_START = '{"error_code":';

/** How many of `answers` (JSON texts) are answers from the data, not per-record errors. */
function answeredOf(answers: readonly string[]): number {
  let answered = 0;
  for (const answer of answers) if (!answer.startsWith(ERROR_JSON_START)) answered++;
  return answered;
}

/** An activity-metrics key names addresses only: `email`, `md5_email` or `sha1_email`. */
const ADDRESS_ONLY = 'Give email, md5_email or sha1_email: activity metrics are looked up by address.';

/** The identifier an activity-metrics record is unique by: the MD5 of its address, or its hash as given. */
function identifierOf(query: PersonQuery): string | undefined {
  if (query.email !== undefined && query.email.trim() !== '') {
    const canonical = canonicalEmail(query.email);
    return canonical === undefined ? `raw:${query.email.trim()}` : `md5:${md5Of(canonical).toString('hex')}`;
  }
  if (query.sha1_email?.trim()) return `sha1:${query.sha1_email.trim().toLowerCase()}`;
  if (query.md5_email?.trim()) return `md5:${query.md5_email.trim().toLowerCase()}`;
  return undefined;
}

/** The answers of an E6 request, each as JSON text. */
function intelligenceAnswers(
  store: IdentityStore,
  records: readonly BulkElement[],
  task: Extract<BulkTask, { kind: 'intelligence' }>,
): string[] {
  if (task.isActivityMetrics) {
    const seen = new Set<string>();
    for (const record of records) {
      const identifier = record.ok ? identifierOf(record.query) : undefined;
      if (identifier === undefined) continue;
      if (seen.has(identifier)) throw new HttpError(400, DUPLICATE_IDENTIFIERS);
      seen.add(identifier);
    }
  }
  const options = {
    nowS: task.nowS,
    invalidEmailMessage: task.isActivityMetrics ? INVALID_EMAIL_PARAMETER : INVALID_IDENTIFIER,
  };
  const recordPolicyOf = recordPolicies(task.key);
  return records.map((record) => {
    if (!record.ok) return JSON.stringify(record.error);
    if (task.isActivityMetrics && !hasEmailRoute(record.query))
      return JSON.stringify(blankEmailError(record.query) ?? recordError(400, ADDRESS_ONLY));
    const recordPolicy = record.fields === undefined ? task.policy : recordPolicyOf(record.fields);
    if (isErrorAnswer(recordPolicy)) return JSON.stringify(recordPolicy);
    return intelligenceAnswerJson(store, record.query, recordPolicy, options);
  });
}

const encoder = new TextEncoder();

/**
 * Where `jsonArrayBytes` writes: grown as needed, and kept for the thread's next request up to SCRATCH_KEPT
 * bytes (a 5,000-record E6 answer needs at most about 11 MB).
 */
let scratch = new Uint8Array(1 << 20);
const SCRATCH_KEPT = 16 * 1024 * 1024;

/**
 * The UTF-8 bytes of a JSON array of `members` (each already JSON text). Each member is encoded where it
 * goes: joining thousands of answers first made one multi-megabyte string to copy and then encode (about 3%
 * more CPU for a 5,000-record E6 request).
 */
function jsonArrayBytes(members: readonly string[]): Uint8Array {
  // At most 3 bytes per UTF-16 code unit, a comma between members, and the brackets.
  let most = members.length + 2;
  for (const member of members) most += member.length * 3;
  if (scratch.length < most) scratch = new Uint8Array(most);
  let at = 0;
  scratch[at++] = 0x5b; // [
  for (let i = 0; i < members.length; i++) {
    if (i > 0) scratch[at++] = 0x2c; // ,
    at += encoder.encodeInto(members[i], scratch.subarray(at)).written;
  }
  scratch[at++] = 0x5d; // ]
  const bytes = scratch.slice(0, at);
  if (scratch.length > SCRATCH_KEPT) scratch = new Uint8Array(1 << 20);
  return bytes;
}

/**
 * The addresses the records name (by `email`, else `sha1_email`, else `md5_email`, as answers.ts reads
 * them), for the store to read ahead in batches. Reading one too many changes no answer: the store only
 * answers from what the database holds.
 */
function addressKeys(records: readonly BulkElement[]): ReadAheadKeys {
  const emails: string[] = [];
  const md5: string[] = [];
  const sha1: string[] = [];
  for (const record of records) {
    if (!record.ok) continue;
    const { email, sha1_email, md5_email } = record.query;
    if (email !== undefined && email.trim() !== '') {
      const canonical = canonicalEmail(email);
      if (canonical !== undefined) emails.push(canonical);
    } else if (sha1_email !== undefined && sha1_email.trim() !== '') {
      const digest = digestHex(sha1_email, 'sha1');
      if (digest !== undefined) sha1.push(digest);
    } else if (md5_email !== undefined && md5_email.trim() !== '') {
      const digest = digestHex(md5_email, 'md5');
      if (digest !== undefined) md5.push(digest);
    }
  }
  return { emails, md5, sha1 };
}

/** Answers one bulk request against `store`. */
export function answerBulk(store: IdentityStore, task: BulkTask): BulkOutcome {
  try {
    const records = parseBulkText(task.body, task.limit);
    // Thousands of one-row lookups cost more in statement calls than in reading: read them in batches.
    if (task.kind === 'identity') {
      store.readAhead(addressKeys(records), undefined);
      const answers = records.map((record) =>
        record.ok ? identityBulkAnswer(store, record.query, task.policy) : record.error,
      );
      const answered = answers.filter((answer) => !isErrorAnswer(answer)).length;
      return { ok: true, json: encoder.encode(JSON.stringify(answers)), answered };
    }
    // A whole-field-set answer is put together from the persons' rendered answers (answers.ts).
    store.readAhead(addressKeys(records), task.nowS, { rendered: isWholeFieldSet(task.policy) });
    const answers = intelligenceAnswers(store, records, task);
    return { ok: true, json: jsonArrayBytes(answers), answered: answeredOf(answers) };
  } catch (error) {
    if (error instanceof HttpError) return { ok: false, status: error.status, message: error.message };
    throw error;
  } finally {
    store.forgetReadAhead();
  }
}
