// `GET /openapi.json`: the API document (OpenAPI 3.1) of E1–E10 and `/v5/key`, made from the zod contracts of
// shared/api that the service and its client validate with (z.toJSONSchema; OpenAPI 3.1 schemas are JSON
// Schema 2020-12), so the document cannot drift from what is checked. Built once, on the first request.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { recordErrorSchema } from '../../shared/api/errors.js';
import { explainedVerifyResponseSchema, verifyQuerySchema } from '../../shared/api/verification.js';
import {
  alternateEmailQuerySchema,
  alternateEmailResponseSchema,
  emailAppendQuerySchema,
  emailAppendResponseSchema,
  postalAppendResponseSchema,
} from '../../shared/api/identity.js';
import {
  bulkRequestSchema,
  identityBulkResponseSchema,
  intelligenceBulkResponseSchema,
  intelligenceQuerySchema,
} from '../../shared/api/bulk.js';
import { intelligenceResponseSchema } from '../../shared/api/intelligence.js';
import {
  listResourceSchema,
  purchaseRequestSchema,
  submitListAcceptedSchema,
  submitListQuerySchema,
} from '../../shared/api/list.js';
import { keyInfoSchema } from '../../shared/api/listServices.js';
import { registerRoute } from './routes.js';

type JsonSchema = Record<string, unknown>;

const REF = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/** The JSON Schema of a zod schema (the side a request gives, `input`, or an answer holds, `output`). */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    reused: 'inline',
  }) as JsonSchema;
  return json;
}

interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required: boolean;
  schema: JsonSchema;
  description?: string;
}

/** A zod object of query parameters as OpenAPI parameters (each as the string-typed request gives it). */
function queryParameters(schema: z.ZodType, required: readonly string[] = []): Parameter[] {
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const isRequired = new Set([...((json.required as string[] | undefined) ?? []), ...required]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: 'query' as const,
      required: isRequired.has(name),
      schema: rest,
      ...(typeof description === 'string' ? { description } : {}),
    };
  });
}

const LIST_ID: Parameter = {
  name: 'list_id',
  in: 'path',
  required: true,
  schema: { type: 'integer', minimum: 1 },
  description: 'The list id E7 answered with',
};

const json = (schema: JsonSchema, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** The answers every keyed endpoint may give besides its own. */
const ERRORS = {
  '400': json(REF('Error'), 'Malformed request (the message says what)'),
  '401': {
    description: 'Invalid API key',
    content: { 'text/plain': { schema: { type: 'string', const: 'Invalid API key.' } } },
  },
  '403': json(REF('Error'), 'The key lacks the service, or its quota is used up'),
  '429': json(REF('Error'), "Past the key's rate limit (Retry-After says when to try again)"),
};

type Security = readonly Record<string, readonly string[]>[];
const QUERY_KEY: Security = [{ api_key_query: [] }];
const HEADER_KEY: Security = [{ api_key_header: [] }];

function operation(
  id: string,
  summary: string,
  security: Security,
  parameters: Parameter[],
  responses: Record<string, unknown>,
  requestBody?: unknown,
): JsonSchema {
  return {
    operationId: id,
    summary,
    security,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { ...responses, ...ERRORS },
  };
}

/** Builds the document. */
export function buildOpenApiDocument(version: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = {
    Error: schemaOf(recordErrorSchema, 'output'),
    VerifyResponse: schemaOf(explainedVerifyResponseSchema, 'output'),
    AlternateEmailResponse: schemaOf(z.union([alternateEmailResponseSchema, recordErrorSchema]), 'output'),
    EppendResponse: schemaOf(
      z.union([emailAppendResponseSchema, postalAppendResponseSchema, recordErrorSchema]),
      'output',
    ),
    BulkRequest: schemaOf(bulkRequestSchema, 'input'),
    IdentityBulkResponse: schemaOf(identityBulkResponseSchema, 'output'),
    IntelligenceResponse: schemaOf(z.union([intelligenceResponseSchema, recordErrorSchema]), 'output'),
    IntelligenceBulkResponse: schemaOf(intelligenceBulkResponseSchema, 'output'),
    ListAccepted: schemaOf(submitListAcceptedSchema, 'output'),
    ListResource: schemaOf(listResourceSchema, 'output'),
    PurchaseRequest: schemaOf(purchaseRequestSchema, 'input'),
    KeyInfo: schemaOf(keyInfoSchema, 'output'),
  };
  const notFound = json(REF('Error'), 'No such list for this key');
  const eppendQuery = queryParameters(
    emailAppendQuerySchema.partial().extend({ email: z.string().optional() }),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Mailsieve Email Data Service',
      version,
      description:
        'Email verification, identity matching, intelligence and list processing. E1–E6 take the key as the query ' +
        'parameter api_key, E7–E10 as the header api_key.',
    },
    components: {
      securitySchemes: {
        api_key_query: { type: 'apiKey', in: 'query', name: 'api_key' },
        api_key_header: { type: 'apiKey', in: 'header', name: 'api_key' },
      },
      schemas,
    },
    paths: {
      '/v5/ev': {
        get: operation(
          'verifyEmail',
          'E1. Verify one email address',
          QUERY_KEY,
          queryParameters(verifyQuerySchema),
          {
            '200': json(REF('VerifyResponse'), 'The verification, in the mode the key is configured for'),
          },
        ),
      },
      '/ae': {
        get: operation(
          'alternateEmail',
          'E2. Alternate email',
          QUERY_KEY,
          queryParameters(alternateEmailQuerySchema),
          {
            '200': json(REF('AlternateEmailResponse'), 'Other addresses of the person, {} when none matched'),
          },
        ),
      },
      '/v5/eppend': {
        get: operation(
          'eppend',
          'E3. Email append (name and postal address) or postal append (email)',
          QUERY_KEY,
          eppendQuery,
          { '200': json(REF('EppendResponse'), 'The match, {} when none') },
        ),
      },
      '/v5/eppend/bulk': {
        post: operation(
          'eppendBulk',
          'E4. Identity matching in bulk',
          QUERY_KEY,
          [],
          { '200': json(REF('IdentityBulkResponse'), 'One element per record, in order') },
          { required: true, content: { 'application/json': { schema: REF('BulkRequest') } } },
        ),
      },
      '/v5/td': {
        get: operation(
          'intelligence',
          'E5. Email intelligence and email activity metrics for one person',
          QUERY_KEY,
          queryParameters(intelligenceQuerySchema),
          {
            '200': json(
              REF('IntelligenceResponse'),
              'The fields enabled for the key that matched, {} when none',
            ),
          },
        ),
      },
      '/v5/ei/bulk': {
        post: operation(
          'intelligenceBulk',
          'E6. Bulk email intelligence',
          QUERY_KEY,
          [],
          { '200': json(REF('IntelligenceBulkResponse'), 'One element per record, in order') },
          { required: true, content: { 'application/json': { schema: REF('BulkRequest') } } },
        ),
      },
      '/v5/list': {
        post: operation(
          'submitList',
          'E7. Submit a list',
          HEADER_KEY,
          queryParameters(submitListQuerySchema),
          {
            '202': {
              ...json(REF('ListAccepted'), 'Accepted; Location names the list'),
              headers: {
                Location: { schema: { type: 'string' }, description: '{base_url}/v5/list/<list_id>' },
              },
            },
            '413': json(REF('Error'), 'The file is larger than this service takes'),
            '422': json(REF('Error'), 'The file cannot be read as a list'),
          },
          {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } },
                  required: ['file'],
                },
              },
              'text/csv': { schema: { type: 'string' } },
            },
          },
        ),
      },
      '/v5/list/{list_id}': {
        get: operation('getList', 'E8. Check list status', HEADER_KEY, [LIST_ID], {
          '200': json(REF('ListResource'), 'The list resource'),
          '404': notFound,
        }),
      },
      '/v5/list/{list_id}/purchase': {
        post: operation(
          'purchaseList',
          'E9. Purchase list results',
          HEADER_KEY,
          [LIST_ID],
          { '200': json(REF('ListResource'), 'The list, processing its purchase'), '404': notFound },
          { required: false, content: { 'application/json': { schema: REF('PurchaseRequest') } } },
        ),
      },
      '/v5/list/{list_id}/results': {
        get: operation('listResults', 'E10. Retrieve list results', HEADER_KEY, [LIST_ID], {
          '200': {
            description: 'The results file (Content-Disposition names it)',
            content: {
              'text/csv': { schema: { type: 'string' } },
              'text/plain': { schema: { type: 'string' } },
              'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } },
            },
          },
          '404': notFound,
        }),
      },
      '/v5/key': {
        get: operation(
          'keyInfo',
          'What the calling key may have (a Mailsieve extension; key in the header or the query)',
          [...HEADER_KEY, ...QUERY_KEY],
          [],
          {
            '200': json(
              REF('KeyInfo'),
              "The key's services, list services, fields and alternate email maximum",
            ),
          },
        ),
      },
    },
  };
}

/** Serves `GET /openapi.json` (no key: the document holds no secret). */
export function registerOpenApi(app: FastifyInstance, version = SERVICE_VERSION): void {
  let body: string | undefined;
  registerRoute(app, 'GET', '/openapi.json', (_request, reply) => {
    body ??= JSON.stringify(buildOpenApiDocument(version));
    return reply.type('application/json; charset=utf-8').send(body);
  });
}

/** The version the document names (package.json's, set by the build; 0.0.0 when run from source). */
export const SERVICE_VERSION = process.env.npm_package_version ?? '0.1.0';
