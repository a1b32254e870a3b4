// What a key may hold (docs/team-server.md, "Limits of a key"): uploads arriving at once, lists waiting or
// running at once, and bytes of lists submitted a UTC day (the bytes of their text: a zip's file uncompressed).
// Past any, E7 answers 429 with Retry-After and words. E7 asks before it reads a body (what the key holds, its
// uploads arriving, the least the declared Content-Length will count), so that a refused upload costs no
// bytes; both adapters of the list store check again, exactly, in the transaction that adds the list, so that
// concurrent submissions never pass them.
import type { KeyRecord } from '../../store/keys.js';
import { formatBytes } from '../../../shared/bytes.js';
import { formatCount } from '../../../shared/count.js';

export type ListLimits = Pick<KeyRecord, 'maxLists' | 'maxBytesDay' | 'maxUploads'>;

/** E7's 429: a limit of the key is reached. */
export class ListLimitError extends Error {
  constructor(
    message: string,
    /** When to try again (Retry-After). */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** What a key holds now, as its limits count it. */
export interface KeyHoldings {
  /** Lists waiting or running (Pending, Processing). */
  readonly inFlight: number;
  /** Bytes of the lists submitted today (UTC). */
  readonly bytesToday: number;
  /** Uploads of the key arriving now (let in by E7, their lists not made yet). */
  readonly uploads?: number;
  /** The least bytes those uploads will count. */
  readonly uploadBytes?: number;
}

/** How long a client waits for a list of the key to end before trying again. */
const LISTS_RETRY_AFTER_S = 60;
/** How long a client waits for one of its uploads to arrive before sending another. */
const UPLOADS_RETRY_AFTER_S = 30;

/** The start of the UTC day of `at`, as the lists' `created_at` text compares. */
export function dayStartOf(at: Date = new Date()): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())).toISOString();
}

/**
 * The error of a list the key may not add now, or undefined when it fits. `sizeBytes` is the bytes of the
 * list's text, or (`isLeast`, before the body) the least its upload will count.
 */
export function listLimitProblem(
  limits: ListLimits,
  held: KeyHoldings,
  sizeBytes: number,
  { isLeast = false, at = new Date() }: { readonly isLeast?: boolean; readonly at?: Date } = {},
): ListLimitError | undefined {
  const uploads = held.uploads ?? 0;
  const uploadBytes = held.uploadBytes ?? 0;
  const lists = held.inFlight + uploads;
  if (limits.maxLists > 0 && lists >= limits.maxLists)
    return new ListLimitError(
      `Too many lists in progress: this key may have ${formatCount(limits.maxLists)} lists waiting or running at once, ` +
        `and has ${formatCount(lists)}${uploads > 0 ? ` (${formatCount(uploads)} of them still being uploaded)` : ''}. ` +
        'Submit this list when one of them has ended.',
      LISTS_RETRY_AFTER_S,
    );
  const bytes = held.bytesToday + uploadBytes;
  if (limits.maxBytesDay > 0 && bytes + sizeBytes > limits.maxBytesDay) {
    return new ListLimitError(
      `Daily upload limit reached: this key may submit ${formatBytes(limits.maxBytesDay)} of lists a day (UTC), ` +
        `has submitted ${formatBytes(bytes)} today` +
        `${uploadBytes > 0 ? ` (${formatBytes(uploadBytes)} of it still being uploaded)` : ''}, ` +
        `and this list is ${isLeast ? 'at least ' : ''}${formatBytes(sizeBytes)}. ` +
        'Submit it after midnight UTC.',
      secondsToMidnight(at),
    );
  }
  return undefined;
}

/** Seconds from `at` to the next midnight UTC (a day's bytes start again then). */
function secondsToMidnight(at: Date): number {
  const tomorrow = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.max(1, Math.ceil((tomorrow - at.getTime()) / 1000));
}

/**
 * The error of an upload larger on its own than the key's `--max-bytes-day` (from its declared length), or
 * undefined: decided from the request alone, without asking the store what the key holds.
 */
export function oversizedUploadProblem(
  limits: ListLimits,
  leastBytes: number,
  isExact: boolean,
  at = new Date(),
): ListLimitError | undefined {
  if (limits.maxBytesDay <= 0 || leastBytes <= limits.maxBytesDay) return undefined;
  return new ListLimitError(
    `Daily upload limit: this key may submit ${formatBytes(limits.maxBytesDay)} of lists a day (UTC), and this ` +
      `list is ${isExact ? '' : 'at least '}${formatBytes(leastBytes)}, more than a whole day allows. ` +
      'Split it into smaller lists.',
    secondsToMidnight(at),
  );
}

/**
 * E7's question before it reads a body: the error of an upload the key may not start now (past
 * `--max-uploads`, or a list that could not fit `--max-lists` or `--max-bytes-day` whatever it holds), or
 * undefined. `leastBytes`: the least its list will count (from the declared Content-Length; `isExact`: what it
 * will count).
 */
export function uploadLimitProblem(
  limits: ListLimits,
  held: KeyHoldings,
  leastBytes: number,
  isExact = false,
): ListLimitError | undefined {
  const uploads = held.uploads ?? 0;
  if (limits.maxUploads > 0 && uploads >= limits.maxUploads)
    return new ListLimitError(
      `Too many uploads at once: this key may send ${formatCount(limits.maxUploads)} ` +
        `${limits.maxUploads === 1 ? 'list' : 'lists'} at a time, and ${formatCount(uploads)} ` +
        `${uploads === 1 ? 'is' : 'are'} still arriving. Send this list when one of them has been received.`,
      UPLOADS_RETRY_AFTER_S,
    );
  // Every list has at least a byte: a key at its day's limit is refused even when no length is declared.
  return listLimitProblem(limits, held, Math.max(1, leastBytes), { isLeast: !isExact });
}

/** The uploads arriving now, per key, in this process: the single node's count (a team server's is in PostgreSQL). */
export class ArrivingUploads {
  private readonly byKey = new Map<number, { count: number; bytes: number }>();

  /** What the key has arriving here. */
  of(keyId: number): { readonly uploads: number; readonly uploadBytes: number } {
    const held = this.byKey.get(keyId);
    return { uploads: held?.count ?? 0, uploadBytes: held?.bytes ?? 0 };
  }

  /** Counts an upload of the key until the returned function is called (once; later calls do nothing). */
  add(keyId: number, bytes: number): () => void {
    const held = this.byKey.get(keyId) ?? { count: 0, bytes: 0 };
    held.count += 1;
    held.bytes += bytes;
    this.byKey.set(keyId, held);
    let isEnded = false;
    return () => {
      if (isEnded) return;
      isEnded = true;
      held.count -= 1;
      held.bytes -= bytes;
      if (held.count === 0) this.byKey.delete(keyId);
    };
  }
}
