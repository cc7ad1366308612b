/**
 * The breaking-change check between two OpenAPI documents: each kind of break found and named,
 * additions left alone, and the generated documents held against themselves and against an
 * edited copy of themselves.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { oas31 } from 'zod-openapi';

import { breakingChanges, describeBreakingChange } from '../../src/cli/breaking-changes.js';
import type { Generation, OpenApiDocument } from '../../src/lib/openapi/document.js';
import { generatedDocuments } from '../support/openapi-responses.js';

/** A one-operation document: POST /things with a body, a query parameter and a success body. */
function documentWith(
  parts: {
    body?: oas31.SchemaObject;
    query?: oas31.ParameterObject[];
    success?: oas31.SchemaObject;
    components?: Record<string, oas31.SchemaObject>;
  } = {},
): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/things': {
        post: {
          parameters: parts.query ?? [
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: parts.body ?? {
                  type: 'object',
                  properties: { kind: { type: 'string', enum: ['a', 'b'] }, note: { type: 'string', maxLength: 10 } },
                  required: ['kind'],
                  additionalProperties: false,
                },
              },
            },
          },
          responses: {
            '200': {
              description: 'ok',
              content: {
                'application/json': {
                  schema: parts.success ?? {
                    type: 'object',
                    properties: { data: { $ref: '#/components/schemas/Thing' } },
                    required: ['data'],
                  },
                },
              },
            },
            '404': { description: 'not found' },
          },
        },
      },
    },
    components: {
      schemas: parts.components ?? {
        Thing: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            status: { type: 'string', enum: ['NEW', 'DONE'] },
            size: { type: 'integer' },
          },
          required: ['id', 'status', 'size'],
        },
      },
    },
  };
}

const base = documentWith();
const kinds = (before: OpenApiDocument, after: OpenApiDocument) =>
  breakingChanges(before, after).map(describeBreakingChange);

describe('breakingChanges', () => {
  it('finds nothing between a document and itself', () => {
    expect(breakingChanges(base, structuredClone(base))).toEqual([]);
  });

  it('names a removed operation and a removed success response', () => {
    const gone = { ...base, paths: {} };
    expect(kinds(base, gone)).toEqual(['operation-removed: POST /things: the operation is gone']);
    const noSuccess = structuredClone(base);
    delete noSuccess.paths!['/things']!.post!.responses!['200'];
    expect(kinds(base, noSuccess)).toEqual(['response-removed: POST /things: 200 is no longer answered']);
  });

  it('names a removed or no longer required response field, through $refs', () => {
    const removed = documentWith({
      components: {
        Thing: {
          type: 'object',
          properties: { id: { type: 'string' }, size: { type: 'integer' } },
          required: ['id', 'size'],
        },
      },
    });
    expect(kinds(base, removed)).toEqual([
      'response-field-removed: POST /things 200: data.status is no longer answered',
    ]);
    const optional = documentWith({
      components: {
        Thing: {
          type: 'object',
          properties: {
            id: { type: 'string' },
            status: { type: 'string', enum: ['NEW', 'DONE'] },
            size: { type: 'integer' },
          },
          required: ['id', 'size'],
        },
      },
    });
    expect(kinds(base, optional)).toEqual(['response-field-optional: POST /things 200: data.status may now be absent']);
  });

  it('names a widened response type, and lets a new response enum value and a new field pass', () => {
    const widened = documentWith({
      components: {
        Thing: {
          type: 'object',
          properties: {
            id: { type: ['string', 'null'] },
            status: { type: 'string', enum: ['NEW', 'DONE', 'LATER'] },
            size: { type: 'number' },
            extra: { type: 'string' },
          },
          required: ['id', 'status', 'size'],
        },
      },
    });
    expect(kinds(base, widened)).toEqual([
      'response-type-widened: POST /things 200: data.id may now be null (was string)',
      'response-type-widened: POST /things 200: data.size may now be number (was integer)',
    ]);
  });

  it('names a narrowed input enum, type or bound, and a body field no longer accepted', () => {
    const narrowed = documentWith({
      query: [{ name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 50 } }],
      body: {
        type: 'object',
        properties: { kind: { type: 'string', enum: ['a'] } },
        required: ['kind'],
        additionalProperties: false,
      },
    });
    expect(kinds(base, narrowed)).toEqual([
      'input-narrowed: POST /things: query limit: maximum is now 50 (was 100)',
      'input-narrowed: POST /things body: kind no longer takes "b"',
      'input-narrowed: POST /things body: note is no longer accepted',
    ]);
  });

  it('names a new required input, parameter or body field, and lets optional ones pass', () => {
    const required = documentWith({
      query: [
        { name: 'limit', in: 'query', required: true, schema: { type: 'integer', minimum: 1, maximum: 100 } },
        { name: 'since', in: 'query', required: false, schema: { type: 'string' } },
      ],
      body: {
        type: 'object',
        properties: {
          kind: { type: 'string', enum: ['a', 'b'] },
          note: { type: 'string', maxLength: 10 },
          owner: { type: 'string' },
          tag: { type: 'string' },
        },
        required: ['kind', 'owner'],
        additionalProperties: false,
      },
    });
    expect(kinds(base, required)).toEqual([
      'input-required: POST /things: query limit is now required',
      'input-required: POST /things body: owner is now required',
    ]);
  });

  it('lets a widened input and an error status added or removed pass', () => {
    const wider = structuredClone(base);
    const body = wider.paths!['/things']!.post!.requestBody as oas31.RequestBodyObject;
    const schema = body.content['application/json']!.schema as oas31.SchemaObject;
    (schema.properties!.kind as oas31.SchemaObject).enum = ['a', 'b', 'c'];
    (schema.properties!.note as oas31.SchemaObject).maxLength = 20;
    delete wider.paths!['/things']!.post!.responses!['404'];
    wider.paths!['/things']!.post!.responses!['409'] = { description: 'conflict' };
    expect(breakingChanges(base, wider)).toEqual([]);
  });
});

describe('breakingChanges on the generated documents', () => {
  let documents: Readonly<Record<Generation, OpenApiDocument>>;
  beforeAll(async () => {
    documents = await generatedDocuments();
  });

  it.each(['v3', 'v2', 'v1'] as const)('finds nothing between the %s document and a copy of it', (generation) => {
    expect(breakingChanges(documents[generation], structuredClone(documents[generation]))).toEqual([]);
  });

  it('names a field taken from the v3 trade record and a new required quote field', () => {
    const edited = structuredClone(documents.v3);
    const trade = edited.components!.schemas!.Trade as oas31.SchemaObject;
    delete trade.properties!.settlementStage;
    trade.required = trade.required!.filter((name) => name !== 'settlementStage');
    const quote = (edited.paths!['/v3/fx/quotes']!.post!.requestBody as oas31.RequestBodyObject).content[
      'application/json'
    ]!.schema as oas31.SchemaObject;
    quote.required = [...quote.required!, 'validForSeconds'];
    const found = kinds(documents.v3, edited);
    expect(found).toContain(
      'response-field-removed: POST /v3/fx/trades 200: data.settlementStage is no longer answered',
    );
    expect(found).toContain(
      'response-field-removed: GET /v3/fx/trades 200: data[].settlementStage is no longer answered',
    );
    expect(found).toContain('input-required: POST /v3/fx/quotes body: validForSeconds is now required');
  });

  it('names v1 operations v2 has and v1 lacks as removed, going from v2 to v1', () => {
    const v2AsV1 = structuredClone(documents.v2);
    v2AsV1.paths = Object.fromEntries(
      Object.entries(v2AsV1.paths!).filter(([path]) => !path.includes('/trade/re') && !path.endsWith('/trade/settle')),
    );
    expect(kinds(documents.v2, v2AsV1).sort()).toEqual([
      'operation-removed: POST /v2/brokerage/{orgId}/trade/reverse-quote: the operation is gone',
      'operation-removed: POST /v2/brokerage/{orgId}/trade/reverse: the operation is gone',
      'operation-removed: POST /v2/brokerage/{orgId}/trade/settle: the operation is gone',
    ]);
  });
});
