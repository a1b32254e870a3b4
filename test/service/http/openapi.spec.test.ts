// The OpenAPI document names the spec's endpoints as the spec names them (issue 39): every endpoint of
// shared/spec/email-data-service.md (its "`GET /v5/…`" lines, E1–E10) is a path of the document with the same
// method and the same path parameters, each declared by that name. A client generated from the document then
// gets the parameter names of one written from the spec (`{list_id}`, not `{id}`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../service/http/openapi.js';

const SPEC = join(import.meta.dirname, '..', '..', '..', '..', 'shared', 'spec', 'email-data-service.md');

interface Operation {
  parameters?: { name: string; in: string; required?: boolean }[];
}

/** The spec's endpoints: method and path (its query left out), from each "### E<n>" section's request line. */
function specEndpoints(): { method: string; path: string }[] {
  const found = new Map<string, { method: string; path: string }>();
  for (const match of readFileSync(SPEC, 'utf8').matchAll(/^`(GET|POST|PUT|DELETE) (\/[^`?\s]*)/gm))
    found.set(`${match[1]} ${match[2]}`, { method: match[1].toLowerCase(), path: match[2] });
  return [...found.values()];
}

const pathParameters = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);

describe('the OpenAPI document against the spec', () => {
  const document = buildOpenApiDocument('test') as { paths: Record<string, Record<string, Operation>> };

  it('finds the spec’s ten endpoints', () => {
    expect(specEndpoints().map((e) => `${e.method} ${e.path}`)).toEqual([
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
    ]);
  });

  it.each(specEndpoints())('has $method $path with the spec’s path parameters', ({ method, path }) => {
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
