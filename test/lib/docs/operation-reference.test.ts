import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { type DocumentedOperation, renderOperationReference } from '../../../src/lib/docs/operation-reference.js';

const options = { idempotencyKeyRequired: (method: string) => method === 'POST' };

const create: DocumentedOperation = {
  method: 'POST',
  path: '/v3/fx/things/:id/notes',
  scope: 'trade',
  sandboxOnly: true,
  summary: 'Add a note to a thing',
  errors: ['THING_NOT_FOUND', 'THING_CLOSED'],
  body: z.strictObject({
    text: z.string().min(1).max(200),
    kind: z.enum(['A', 'B']),
    count: z.number().int().default(3),
    tags: z.array(z.enum(['x', 'y'])).max(4).optional(),
    extra: z.record(z.string().max(8), z.string().max(50)).optional(),
  }),
};

const list: DocumentedOperation = {
  method: 'GET',
  path: '/v3/fx/things',
  scope: 'view',
  query: z.strictObject({
    limit: z.string().regex(/^[0-9]+$/).transform(Number).pipe(z.number().min(1).max(100)).default(25),
    verified: z.enum(['true', 'false']).transform((value) => value === 'true').optional(),
  }),
};

const variants: DocumentedOperation = {
  method: 'POST',
  path: '/v3/fx/accounts',
  scope: 'withdraw',
  body: z.discriminatedUnion('assetType', [z.strictObject({ assetType: z.literal('FIAT'), iban: z.string() }), z.strictObject({ assetType: z.literal('STABLECOIN'), address: z.string() })]),
};

describe('the operation reference', () => {
  const text = renderOperationReference([create, list, variants, { method: 'POST', path: '/v3/fx/things/:id/close', scope: 'trade' }], options);

  it('indexes every operation with a link to its part', () => {
    expect(text).toContain('| [`POST /v3/fx/things/{id}/notes`](#post-v3fxthingsidnotes) | Add a note to a thing | `trade` | required | yes |');
    expect(text).toContain('| [`GET /v3/fx/things`](#get-v3fxthings) |  | `view` |  |  |');
    expect(text).toContain('### `POST /v3/fx/things/{id}/notes`\n\nAdd a note to a thing. Scope `trade`. Path: `id`. Idempotency-Key required. Sandbox only (`X-App-Mode: SANDBOX`).');
    expect(text).toContain("Its own errors, beside the pipeline's: `THING_NOT_FOUND`, `THING_CLOSED`.");
  });

  it('describes each body field from its schema as the client sends it', () => {
    expect(text).toContain('| `text` | yes | string, 1 to 200 characters |  |');
    expect(text).toContain('| `kind` | yes | one of `A`, `B` |  |');
    expect(text).toContain('| `count` | no | integer | `3` |');
    expect(text).toContain('| `tags` | no | array of at most 4 items, each one of `x`, `y` |  |');
    expect(text).toContain('| `extra` | no | object: keys string, at most 8 characters; values string, at most 50 characters |  |');
  });

  it('describes a query parameter by the value it is read as, and its text where a transform hides that', () => {
    expect(text).toContain('| `limit` | no | number, 1 to 100 | `25` |');
    expect(text).toContain('| `verified` | no | one of `true`, `false` |  |');
  });

  it('gives a body of several shapes one table per shape, named by its fixed values', () => {
    expect(text).toContain('The body is one of 2 shapes:\n\nWith `assetType` `FIAT`:');
    expect(text).toContain('With `assetType` `STABLECOIN`:');
    expect(text).toContain('| `address` | yes | string |  |');
  });

  it('says when an operation takes no parameters', () => {
    expect(text).toContain('### `POST /v3/fx/things/{id}/close`\n\nScope `trade`. Path: `id`. Idempotency-Key required.\n\nNo parameters: an empty body or `{}`.');
  });
});
