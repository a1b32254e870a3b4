// The list-completion callback (spec "Events"): the status document POSTed as JSON to the list's callback_url
// when the list finishes or fails. Delivery never holds up processing: it runs on its own, retrying a failed
// attempt (network error, timeout or a non-2xx answer) after growing delays, and gives up after the last
// one, saying so on stderr. Redirects are not followed. Unless private targets are allowed, the target is
// checked (callbackTarget.ts) and connections go only to public addresses, checked when they are made. Names
// are resolved there too, by c-ares within a time limit, never by the system's lookup on the thread pool.
import type { ListResource } from '../../../shared/api/list.js';
import type { DnsServer } from '../../engine/online/dns.js';
import { callbackDispatcher, callbackTargetProblem, type CallbackResolution } from './callbackTarget.js';

export interface CallbackOptions {
  /**
   * Whether callbacks may go to this machine or a private network. Default true (the embedded service, on
   * loopback); `mailsieve serve` allows them only with --allow-private-callbacks.
   */
  readonly allowPrivateTargets?: boolean;
  /** DNS servers that resolve callback names (the node's `--dns-servers`); default: the system's (resolv.conf). */
  readonly dnsServers?: readonly DnsServer[];
  /** Where a failed delivery is reported; default stderr. */
  readonly log?: (line: string) => void;
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

/** How a node with these options resolves and checks callback targets. */
export function callbackResolutionOf(options: CallbackOptions = {}): CallbackResolution {
  return {
    allowPrivate: options.allowPrivateTargets ?? true,
    ...(options.dnsServers ? { dnsServers: options.dnsServers } : {}),
  };
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
  const resolution = callbackResolutionOf(options);
  // The address without its query, which may carry the receiver's token.
  const shown = (() => {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  })();
  const log = (why: string) =>
    (options.log ?? ((line: string) => process.stderr.write(`${line}\n`)))(
      `List ${document.list_id}: the callback to ${shown} was not delivered: ${why}.`,
    );
  const problem = await callbackTargetProblem(url, resolution);
  if (problem !== undefined) {
    log(problem);
    return false;
  }
  // undici is loaded on the first callback: most runs deliver none, and loading it took 80 ms of every start.
  const { fetch } = await import('undici');
  const dispatcher = await callbackDispatcher(resolution);
  let lastFailure = 'no attempt was made';
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
        dispatcher,
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return true;
      lastFailure = `HTTP ${response.status}`;
    } catch (error) {
      // A network error or a timeout: tried again after the next delay.
      const cause = (error as { cause?: { message?: string } }).cause;
      lastFailure = cause?.message ?? (error as Error).message;
    }
  }
  if (!signal.aborted) log(`${delays.length + 1} attempts failed (last: ${lastFailure})`);
  return false;
}
