// Ports for the servers tests and benches start on loopback.
import { createServer } from 'node:net';

/** A TCP port free on `ip` (127.0.0.1 unless said) just now. */
export async function freePort(ip = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, ip, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
