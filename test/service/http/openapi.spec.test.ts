// The OpenAPI document names the spec's endpoints as the spec names them (issue 39): every endpoint of
// shared/spec/email-data-service.md (its "`GET /v5/…`" lines, E1–E10) is a path of the document with the same
// method and the same path parameters, each declared by that name. A client generated from the document then
// gets the parameter names of one written from the spec (`{list_id}`, not `{id}`).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../service/http/openapi.js';

// The spec sits beside the repository (../shared/spec): where it does, the endpoints are read from it and
// must be the ten below; a checkout without it (a newcomer's) checks the document against the ten alone.
const SPEC = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'spec', 'email-data-service.md');
const hasSpec = existsSync(SPEC);

interface Operation {
  parameters?: { name: string; in: string; required?: boolean }[];
}

/** The spec's endpoints, E1–E10, as its request lines give them. */
const SPEC_ENDPOINTS = [
  'get /v5/ev',
  'get /ae',
  'get /v5/eppend',
  'post /v5/eppend/bulk',
  'get /v5/td',
  'post /v5/ei/bulk',
  'post /v5/list',
  'get /v5/list/{list_id}',
  'post /v5/list/{list_id}/purchase',
  'get /v5/list/{list_id}/results',
];

/** The spec's endpoints: method and path (its query left out), from each "### E<n>" section's request line. */
function specEndpoints(): string[] {
  const found = new Set<string>();
  for (const match of readFileSync(SPEC, 'utf8').matchAll(/^`(GET|POST|PUT|DELETE) (\/[^`?\s]*)/gm))
    found.add(`${match[1].toLowerCase()} ${match[2]}`);
  return [...found];
}

const pathParameters = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

describe('the OpenAPI document against the spec', () => {
  const document = buildOpenApiDocument('test') as { paths: Record<string, Record<string, Operation>> };

  it.skipIf(!hasSpec)('finds the spec’s ten endpoints in the spec', () => {
    expect(specEndpoints()).toEqual(SPEC_ENDPOINTS);
  });

  it.each(
    SPEC_ENDPOINTS.map((endpoint) => {
      const [method, path] = endpoint.split(' ') as [string, string];
      return { method, path };
    }),
  )('has $method $path with the spec’s path parameters', ({ method, path }) => {
    const operation = document.paths[path]?.[method];
    expect(operation, `${method.toUpperCase()} ${path} is not in the document`).toBeDefined();
    const declared = (operation.parameters ?? []).filter((p) => p.in === 'path');
    expect(declared.map((p) => p.name).sort()).toEqual(pathParameters(path).sort());
    expect(declared.every((p) => p.required === true)).toBe(true);
  });

  it('declares every path parameter of every path by the name its path gives', () => {
    for (const [path, operations] of Object.entries(document.paths))
      for (const operation of Object.values(operations))
        expect(
          (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
          path,
        ).toEqual(pathParameters(path));
  });
});
