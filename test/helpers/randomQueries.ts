// Query strings made of random pieces (a fixed seed: the same queries every run), for tests that compare a
// query's handling with another reading of it (test/service/http/params.test.ts, query.test.ts).

/** `count` queries of 1 to `mostPieces` pieces each, drawn from `pieces` with a linear congruential generator. */
export function randomQueries(
  pieces: readonly string[],
  count: number,
  mostPieces: number,
  seed: number,
): string[] {
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  const queries: string[] = [];
  for (let i = 0; i < count; i++) {
    let query = '';
    for (let n = next() % mostPieces; n >= 0; n--) query += pieces[next() % pieces.length];
    queries.push(query);
  }
  return queries;
}
