// The online phase of a list (E8's `online`, a Mailsieve extension: docs/online-checks.md) as the Progress
// screen reads it, and Finish now (POST /v5/list/{id}/finish): a list waiting for a retry of temporary
// failures stops waiting, and those rows stay unknown (code 5).
import type { ListResource } from '../../shared/api/list.js';
import type { OnlineProgress } from '../../shared/desktop/contract.js';

export function onlineProgressOf(document: ListResource): OnlineProgress | null {
  const online = document.online;
  if (!online) return null;
  return {
    rowsToCheck: online.rows_to_check,
    rowsChecked: online.rows_checked,
    domainsTotal: online.domains_total,
    domainsDone: online.domains_done,
    ratePerSecond: online.rate_per_s,
    retryRows: online.retry_rows,
    retryAt: online.retry_at,
    isFinishedEarly: online.finished_early === true,
  };
}

/** Ends a list's wait for retries on the service the client talks to; the error in words, or null. */
export async function finishListNow(
  service: { baseUrl: string; apiKey: string },
  listId: number,
): Promise<string | null> {
  const url = new URL(`/v5/list/${listId}/finish`, service.baseUrl);
  let answer: Response;
  try {
    answer = await fetch(url, {
      method: 'POST',
      headers: { api_key: service.apiKey },
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return `the service did not answer (${(error as Error).name})`;
  }
  if (answer.ok) {
    await answer.arrayBuffer();
    return null;
  }
  const body = (await answer.json().catch(() => ({}))) as { error_msg?: unknown };
  return `HTTP ${answer.status}${typeof body.error_msg === 'string' ? `: ${body.error_msg}` : ''}`;
}
