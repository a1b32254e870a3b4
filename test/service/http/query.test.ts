// parseQuery (service/http/query.ts), the node's query string parser: what fast-querystring (Fastify's own
// parser) gives, on chosen queries and on many random ones; and the node parses its queries with it.
import { parse as fastQuerystring } from 'fast-querystring';
import { describe, expect, it } from 'vitest';
import { buildService } from '../../../service/http/app.js';
import { isParsedQuery, parseQuery } from '../../../service/http/query.js';
import { openServiceDb } from '../../../service/store/db.js';
import { randomQueries } from '../../helpers/randomQueries.js';
import { tempDir } from '../../helpers/service.js';

/** A parsed query as plain data (its own properties, in order), to compare two parsers' results. */
const plain = (query: object) => Object.entries(query);

describe('parseQuery', () => {
  it('reads what fast-querystring reads', () => {
    for (const query of [
      'email=jane.doe%40example.com&api_key=msk_x',
      'email=a+b%2Bc&email=d',
      'a=1&a=2&a=3',
      '=x&&a&b=&c==d&e=f=g',
      'na%6De=v%61lue&na+me=v+',
      '__proto__=x&constructor=y&toString=z',
      'email=%ZZ&timeout=%',
      'a%=b%C3%BC&%E2%82%AC=%E2%82',
      '+=+&%20=%20',
      'explain&timeout=5&api_key=k&api_keys=1&emai=2&emails=3',
      '',
      '&',
      'a',
    ]) {
      const parsed = parseQuery(query);
      expect(plain(parsed), query).toEqual(plain(fastQuerystring(query)));
      expect(Object.getPrototypeOf(Object.getPrototypeOf(parsed)), query).toBeNull();
    }
  });

  it('agrees with fast-querystring on many random queries', () => {
    const pieces = [
      'a',
      'email',
      'api_key',
      '=',
      '&',
      '+',
      '%',
      '%4',
      '%40',
      '%C3%BC',
      '%FF',
      'ü',
      '__proto__',
    ];
    for (const query of randomQueries(pieces, 20_000, 9, 11))
      expect(plain(parseQuery(query)), query).toEqual(plain(fastQuerystring(query)));
  });

  it("is the node's parser", async () => {
    const dir = tempDir();
    const db = openServiceDb(dir.path);
    const { app } = buildService({ db });
    try {
      app.get('/probe', (request) => ({ ours: isParsedQuery(request.query), query: request.query }));
      const answer = await app.inject({ url: '/probe?email=jane.doe%40example.com&a=1&a=2' });
      expect(answer.json()).toEqual({ ours: true, query: { email: 'jane.doe@example.com', a: ['1', '2'] } });
    } finally {
      await app.close();
      db.close();
      dir.remove();
    }
  });
});
