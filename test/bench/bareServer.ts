// The baseline of the E1 benchmark: a bare Fastify route returning a constant JSON, in its own process.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
const body = { safe_to_send: { address: 'jane.doe@example.com', status: 'valid', status_code: 10 } };
app.get('/bare', () => body);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
