// The online phase of a list (E8's `online`, a Mailsieve extension: docs/online-checks.md) as the Progress
// screen reads it. Finish now is listOnline.ts's finishListWait.
import type { ListResource } from '../../../shared/api/list.js';
import type { OnlineProgress } from '../../../shared/desktop/contract.js';

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
    ...(online.unknown_causes ? { unknownCauses: online.unknown_causes } : {}),
    ...(online.paced_by ? { pacedBy: online.paced_by.words } : {}),
  };
}
