// The node's query string parser (Fastify's `routerOptions.querystringParser`): what fast-querystring, Fastify's
// own, gives, for less of E1's time. A parameter is an own property of an object without Object.prototype in
// its chain (`__proto__` is a parameter like any other); a parameter given twice, an array of its values; `+`
// is a space; a name or value with `%` is decoded (fast-decode-uri-component, as fast-querystring does), and
// kept as given when it does not decode (the node's first hook answers such a query 400: params.ts); an empty
// part (`a&&b`) is nothing, a part without `=` a parameter whose value is empty.
//
// Why not fast-querystring itself: it reads the query a character at a time, from the slice of the URL the
// router made, and makes each name a new string. Under callgrind, a node answering E1 (two parameters) spent
// 4,500 instructions a request in it, ~5% of the request; here the separators are found by `indexOf` (native),
// each position searched once, and the service's own parameter names are not made again but taken from a table
// (a name a property store must otherwise hash and look up). test/service/http/query.test.ts checks the two
// alike on random queries.
import decode from 'fast-decode-uri-component';

/** What the parser gives: the parameters, by name. */
export type ParsedQuery = Record<string, string | string[]>;

/** Its objects' constructor: no Object.prototype in their chain. */
const Parameters = function () {} as unknown as new () => ParsedQuery;
Parameters.prototype = Object.create(null) as object;

/** Whether `value` was made by parseQuery (its parameters are its own properties, strings or arrays of them). */
export function isParsedQuery(value: unknown): value is ParsedQuery {
  return value instanceof Parameters;
}

/** Parameter names of the service's endpoints (the spec's), by length: taken as they are, not sliced again. */
const NAMES_BY_LENGTH: (string[] | undefined)[] = [];
for (const name of ['email', 'api_key', 'timeout', 'explain', 'format', 'js', 'name', 'city', 'state', 'zip'])
  (NAMES_BY_LENGTH[name.length] ??= []).push(name);

/** The name at `input[start, end)`, one of NAMES_BY_LENGTH's when it is one. */
function nameAt(input: string, start: number, end: number): string {
  const names = NAMES_BY_LENGTH[end - start];
  if (names !== undefined)
    for (let i = 0; i < names.length; i++) if (input.startsWith(names[i], start)) return names[i];
  return input.slice(start, end);
}

/** `text` with `+` as a space (when `plus`) and decoded (when `percent`; as given when it does not decode). */
function unescape(text: string, plus: boolean, percent: boolean): string {
  if (plus) text = text.replaceAll('+', ' ');
  return percent ? (decode(text) ?? text) : text;
}

/** Parses a query string (without its `?`). */
export function parseQuery(input: string): ParsedQuery {
  const parameters = new Parameters();
  if (typeof input !== 'string') return parameters;
  const length = input.length;
  // The first `=`, `+` and `%` at or after the part being read (-1: none left), each searched for again only
  // once a part is past it: every character is searched once for each, whatever the parts (no quadratic time
  // for a query of many parts without `=`).
  let equals = -2;
  let plus = -2;
  let percent = -2;
  for (let start = 0; start < length;) {
    let end = input.indexOf('&', start);
    if (end === -1) end = length;
    if (end > start) {
      if (equals !== -1 && equals < start) equals = input.indexOf('=', start);
      if (plus !== -1 && plus < start) plus = input.indexOf('+', start);
      if (percent !== -1 && percent < start) percent = input.indexOf('%', start);
      const hasValue = equals !== -1 && equals < end;
      const nameEnd = hasValue ? equals : end;
      const name = unescape(
        nameAt(input, start, nameEnd),
        plus !== -1 && plus < nameEnd,
        percent !== -1 && percent < nameEnd,
      );
      let value = '';
      if (hasValue) {
        value = input.slice(equals + 1, end);
        // Whether the value has them: the part does, and the first is past the name or the value has one too.
        const valueHasPlus = plus !== -1 && plus < end && (plus > equals || value.includes('+'));
        const valueHasPercent = percent !== -1 && percent < end && (percent > equals || value.includes('%'));
        value = unescape(value, valueHasPlus, valueHasPercent);
      }
      const given = parameters[name];
      if (given === undefined) parameters[name] = value;
      else if (typeof given === 'string') parameters[name] = [given, value];
      else given.push(value);
    }
    start = end + 1;
  }
  return parameters;
}
