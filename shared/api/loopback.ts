// Whether a service address is on this computer's loopback interface: the embedded service, and the
// addresses where plain HTTP is fine for a provider (the key never leaves the machine). Kept apart from the
// client so that the renderer can ask without bundling it.

/** An IPv4 address of 127.0.0.0/8 in dotted decimal: three more numbers of 0–255 (no sign, no leading zero). */
const LOOPBACK_V4 = /^127(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * True for a host name or address on the loopback interface: `localhost`, an address of 127.0.0.0/8, ::1
 * (bracketed or not). Anything else, 127.1.2.300 included (not an address), is not.
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || LOOPBACK_V4.test(host);
}

/** True for a base URL on the loopback interface (our embedded service). */
export function isLoopbackUrl(baseUrl: string): boolean {
  try {
    return isLoopbackHost(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}
