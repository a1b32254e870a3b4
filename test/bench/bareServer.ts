// The baseline of the E1 benchmark: a bare Fastify route returning a constant JSON, in its own process.
import Fastify from 'fastify';
import { BARE_BODY } from './util.js';

const app = Fastify({ logger: false });
app.get('/bare', () => BARE_BODY);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
