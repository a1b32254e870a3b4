// The IPC sender check of the Electron shell: a call comes from the app's own page only if the sending
// frame's URL, parsed, has the app's scheme and host exactly. (A string prefix would take
// `app://mailsieve.evil/…` or `app://mailsieve@evil/…`.) For custom schemes such as app:// the WHATWG
// origin is "null", so scheme and host are compared themselves.

/** Whether `frameUrl` is a page of `appOrigin` (e.g. `app://mailsieve`). */
export function isAppFrameUrl(frameUrl: string | undefined, appOrigin: string): boolean {
  if (!frameUrl) return false;
  let url: URL;
  let expected: URL;
  try {
    url = new URL(frameUrl);
    expected = new URL(appOrigin);
  } catch {
    return false;
  }
  return (
    url.protocol === expected.protocol &&
    url.host === expected.host &&
    url.username === '' &&
    url.password === ''
  );
}
