// Whether a service address is on this computer's loopback interface: the embedded service, and the
// addresses where plain HTTP is fine for a provider (the key never leaves the machine). Kept apart from the
// client so that the renderer can ask without bundling it.

/** True for a host name or address on the loopback interface: `localhost`, 127.x.y.z, ::1 (bracketed or not). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** True for a base URL on the loopback interface (our embedded service). */
export function isLoopbackUrl(baseUrl: string): boolean {
  try {
    return isLoopbackHost(new URL(baseUrl).hostname);
  } catch {
    return false;
  }
}
