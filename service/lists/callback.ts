// The list-completion callback (spec "Events"): the status document POSTed as JSON to the list's callback_url
// when the list finishes or fails. Delivery never holds up processing: it runs on its own, retrying a failed
// attempt (network error, timeout or a non-2xx answer) after growing delays, and gives up quietly after the
// last one. Redirects are not followed.
import type { ListResource } from '../../shared/api/list.js';

export interface CallbackOptions {
  /** Waits before the 2nd, 3rd, … attempts. Default 1 s, 5 s, 25 s (four attempts in all). */
  readonly retryDelaysMs?: readonly number[];
  /** Per attempt. Default 10 s. */
  readonly timeoutMs?: number;
}

export const DEFAULT_CALLBACK_DELAYS_MS = [1_000, 5_000, 25_000] as const;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Delivers one callback; resolves whether it succeeded (it never rejects). */
export async function deliverCallback(
  url: string,
  document: ListResource,
  signal: AbortSignal,
  options: CallbackOptions = {},
): Promise<boolean> {
  const delays = options.retryDelaysMs ?? DEFAULT_CALLBACK_DELAYS_MS;
  const body = JSON.stringify(document);
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) await pause(delays[attempt - 1], signal);
    if (signal.aborted) return false;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'Mailsieve list callback' },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs ?? 10_000)]),
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return true;
    } catch {
      // A network error or a timeout: tried again after the next delay.
    }
  }
  return false;
}
