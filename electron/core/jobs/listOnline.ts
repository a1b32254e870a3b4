// The Mailsieve extensions of a list with online checks, for the app and the CLI alike: Finish now (end the
// wait for a retry of temporary failures) and the why per row (explain.csv). Plain HTTP to the service, the
// key in the `api_key` header as E7–E10 take it; the key never appears in a URL or an error.
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { listResourceSchema, type ListResource } from '../../../shared/api/list.js';

export class ListOnlineError extends Error {}

/**
 * Finish now: `POST /v5/list/{id}/finish`. The rows waiting for a retry stay unknown and the list completes;
 * answers the status document.
 */
export async function finishListWait(baseUrl: string, apiKey: string, listId: number): Promise<ListResource> {
  const answer = await fetch(new URL(`/v5/list/${listId}/finish`, baseUrl), {
    method: 'POST',
    headers: { api_key: apiKey },
  });
  const text = await answer.text();
  if (!answer.ok) {
    let message = `HTTP ${answer.status}`;
    try {
      const body = JSON.parse(text) as { error_msg?: unknown };
      if (typeof body.error_msg === 'string') message = body.error_msg;
    } catch {
      // not JSON: the status says enough
    }
    throw new ListOnlineError(`Could not finish list ${listId}: ${message}`);
  }
  return listResourceSchema.parse(JSON.parse(text));
}

/**
 * Downloads a list's explanations (GET /v5/list/{id}/explain) to `path`, whole or not at all. Answers false
 * (and writes nothing) when the list has none: it ran offline, so its codes say why.
 */
export async function downloadExplanations(
  baseUrl: string,
  apiKey: string,
  listId: number,
  path: string,
  /** Keeps the CSV in another form (the app's compact evidence file), whole or not at all; default: as sent. */
  keep?: (csv: AsyncIterable<Uint8Array>, path: string) => Promise<unknown>,
): Promise<boolean> {
  const answer = await fetch(new URL(`/v5/list/${listId}/explain`, baseUrl), {
    headers: { api_key: apiKey },
  });
  if (answer.status === 404) {
    await answer.body?.cancel();
    return false;
  }
  if (!answer.ok)
    throw new ListOnlineError(
      `Could not download the explanations of list ${listId}: HTTP ${answer.status}.`,
    );
  if (keep) {
    if (!answer.body) throw new ListOnlineError(`The explanations of list ${listId} came with no body.`);
    await keep(Readable.fromWeb(answer.body), path);
    return true;
  }
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    if (!answer.body) throw new ListOnlineError(`The explanations of list ${listId} came with no body.`);
    await pipeline(Readable.fromWeb(answer.body), createWriteStream(temporary, { mode: 0o600 }));
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return true;
}
