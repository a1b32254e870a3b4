// queryEncodingProblem (service/http/params.ts): a query whose escapes are all of ASCII bytes is passed
// without decoding; every other query is judged by decoding its parts, and the two agree.
import { describe, expect, it } from 'vitest';
import { queryEncodingProblem } from '../../../service/http/params.js';
import { randomQueries } from '../../helpers/randomQueries.js';

/** Whether every part of the URL's query decodes (what queryEncodingProblem judges). */
function decodes(url: string): boolean {
  const question = url.indexOf('?');
  if (question < 0) return true;
  return url
    .slice(question + 1)
    .split('&')
    .every((part) => {
      try {
        decodeURIComponent(part.replaceAll('+', ' '));
        return true;
      } catch {
        return false;
      }
    });
}

describe('queryEncodingProblem', () => {
  it('passes well-formed escapes, ASCII or UTF-8, and names the parameter of a malformed one', () => {
    for (const url of [
      '/v5/ev?email=jane.doe%40example.com&api_key=msk_x',
      '/v5/ev?email=someone%40m%C3%BCnchen.de',
      '/v5/ev?email=%7F%00%3D',
      '/v5/ev?email=plain',
      '/v5/ev',
      '/v5/%ZZ?email=a%40b.com', // the path is not the query's business
    ])
      expect(queryEncodingProblem(url), url).toBeUndefined();
    for (const [url, name] of [
      ['/v5/ev?email=a%ZZb%40example.com', 'email'],
      ['/v5/ev?api_key=k&email=a%40example.com%', 'email'],
      ['/v5/ev?email=a%FF%40example.com', 'email'],
      ['/v5/ev?email=a%4', 'email'],
      ['/v5/ev?email=%E2%82', 'email'],
      ['/v5/ev?e%ZZ=1', 'e%ZZ'],
    ])
      expect(queryEncodingProblem(url), url).toContain(`parameter '${name}'`);
  });

  it('agrees with decoding each part, on many queries of escapes and near-escapes', () => {
    const pieces = [
      '%',
      '%4',
      '%40',
      '%7f',
      '%80',
      '%C3',
      '%BC',
      '%E2%82%AC',
      '%ZZ',
      'a',
      '=',
      '&',
      '+',
      'ü',
    ];
    for (const query of randomQueries(pieces, 5_000, 6, 7)) {
      const url = `/v5/ev?${query}`;
      expect(queryEncodingProblem(url) === undefined, url).toBe(decodes(url));
    }
  });
});
