// What a key may hold (docs/team-server.md, "Limits of a key"): lists waiting or running at once, and bytes of
// lists submitted a UTC day. Past either E7 answers 429 with Retry-After and words. Both adapters of the list
// store check them in the transaction that adds the list, so that concurrent submissions never pass them.
import type { KeyRecord } from '../../store/keys.js';

export type ListLimits = Pick<KeyRecord, 'maxLists' | 'maxBytesDay'>;

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

/** How long a client waits for a list of the key to end before trying again. */
const LISTS_RETRY_AFTER_S = 60;

const count = (n: number) => n.toLocaleString('en-US');

/** The start of the UTC day of `at`, as the lists' `created_at` text compares. */
export function dayStartOf(at: Date = new Date()): string {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())).toISOString();
}

function bytesInWords(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${count(n)} bytes`;
}

/** The error of a list the key may not add now, or undefined when it fits. */
export function listLimitProblem(
  limits: ListLimits,
  inFlight: number,
  bytesToday: number,
  sizeBytes: number,
  at: Date = new Date(),
): ListLimitError | undefined {
  if (limits.maxLists > 0 && inFlight >= limits.maxLists)
    return new ListLimitError(
      `Too many lists in progress: this key may have ${count(limits.maxLists)} lists waiting or running at once, ` +
        `and has ${count(inFlight)}. Submit this list when one of them has ended.`,
      LISTS_RETRY_AFTER_S,
    );
  if (limits.maxBytesDay > 0 && bytesToday + sizeBytes > limits.maxBytesDay) {
    const tomorrow = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
    return new ListLimitError(
      `Daily upload limit reached: this key may submit ${bytesInWords(limits.maxBytesDay)} of lists a day (UTC), ` +
        `has submitted ${bytesInWords(bytesToday)} today, and this list is ${bytesInWords(sizeBytes)}. ` +
        'Submit it after midnight UTC.',
      Math.max(1, Math.ceil((tomorrow - at.getTime()) / 1000)),
    );
  }
  return undefined;
}
