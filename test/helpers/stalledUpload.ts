// An E7 upload that declares a body and sends only its first bytes, then nothing (a slow or hostile client):
// whether the service answers before the body, and how fast, and the socket to close when done.
import { request, type IncomingHttpHeaders } from 'node:http';

export interface EarlyAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** When it came, after the request was sent. */
  readonly ms: number;
}

export interface StalledUpload {
  /** The answer, if one comes while the body has not arrived. */
  readonly answer: Promise<EarlyAnswer>;
  /** The answer within `ms`, or undefined (none came). */
  within(ms: number): Promise<EarlyAnswer | undefined>;
  /** Closes the socket: the upload ends, cut short. */
  close(): void;
}

/**
 * POST /v5/list with Content-Length `declared` and only `first` of the body sent. `type` is the Content-Type
 * (a multipart body's boundary is declared and never reached).
 */
export function stalledUpload(
  base: string,
  key: string,
  declared: number,
  {
    type = 'text/csv',
    first = 'email\na@example.com\n',
    query = 'header=true',
  }: { readonly type?: string; readonly first?: string; readonly query?: string } = {},
): StalledUpload {
  const started = Date.now();
  const contentType = type === 'multipart/form-data' ? `${type}; boundary=stalled` : type;
  const body =
    type === 'multipart/form-data'
      ? `--stalled\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\n${first}`
      : first;
  const sent = request(`${base}/v5/list?${query}`, {
    method: 'POST',
    headers: { api_key: key, 'content-type': contentType, 'content-length': String(declared) },
  });
  const answer = new Promise<EarlyAnswer>((resolve, reject) => {
    sent.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text,
          ms: Date.now() - started,
        }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
  });
  // Closed by the test (or by the service after its answer): no unhandled rejection.
  answer.catch(() => undefined);
  sent.flushHeaders();
  sent.write(body);
  return {
    answer,
    within: (ms) =>
      Promise.race([
        answer.catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms)),
      ]),
    close: () => sent.destroy(),
  };
}
