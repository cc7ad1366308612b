/**
 * What the routes of a book's records share: the cursor list filtered by status and currency
 * (docs/contract.md#pagination-cursor), the retrieve-one route, and a write's rescue that names
 * the resource a failed write is about (docs/contract.md#errors-recovery). Used by the route files
 * beside it; imports the core's http, pagination and wire types, and lib.
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import { defineOperation } from '../http/operation.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import { cursorScope } from '../pagination/cursor-codec.js';
import { cursorQuerySchema } from '../pagination/cursor-query.js';
import { cursorPageOf, paginate } from '../pagination/paginate.js';
import type { Principal } from '../principal.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';
import { dataOf } from '../wire-types.js';

/** What the read routes of a record need: the database and the reference data records are written with. */
export interface RecordReadContext {
  readonly db: Queryable;
  readonly reference: () => Promise<ReferenceSnapshot>;
}

/** One kind of record as its routes read it: its schema, how a book finds one, how it is written. */
export interface RecordKind<Row, Out> {
  /** The record's name: `deposit`, whose routes are /v3/fx/deposits and /v3/fx/deposits/{id}. */
  readonly noun: string;
  readonly schema: z.ZodType<Out>;
  readonly find: (db: Queryable, principal: Principal, id: string) => Promise<Row | null>;
  readonly toRecord: (row: Row, reference: ReferenceSnapshot) => Out;
}

/** Where a list's rows come from: by default the table named as the list, whose `currency` the filter matches. */
export interface ListSource {
  /** A table name or a FROM clause (trusted SQL) whose rows are the record's rows. */
  readonly from: string;
  /** The currency filter's condition on $4. */
  readonly currencyMatch: string;
}

/** GET /v3/fx/{noun}s: the book's records newest first, optionally of one status and currency. */
export function statusCurrencyListOperation<Row, Out>(
  context: RecordReadContext,
  cursors: CursorCodec,
  kind: RecordKind<Row, Out>,
  statuses: readonly [string, ...string[]],
  source?: ListSource,
) {
  const list = `${kind.noun}s`;
  const { from, currencyMatch } = source ?? { from: list, currencyMatch: 'currency = $4' };
  return defineOperation({
    method: 'GET',
    path: `/v3/fx/${list}`,
    scope: 'view',
    summary: `List ${list}, newest first`,
    response: cursorPageOf(kind.schema),
    query: cursorQuerySchema({
      status: z.enum(statuses).optional(),
      currency: z
        .string()
        .regex(/^[A-Z]{3,5}$/)
        .optional(),
    }),
    async handle({ principal, query }) {
      const reference = await context.reference();
      const page = await paginate<Row, Out>(context.db, {
        from,
        where: {
          sql: `org_id = $1 AND environment = $2 AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR ${currencyMatch})`,
          params: [principal.orgId, principal.environment, query.status ?? null, query.currency ?? null],
        },
        scope: cursorScope(list, principal.orgId, principal.environment, {
          status: query.status,
          currency: query.currency,
        }),
        query,
        codec: cursors,
        toRecord: (row) => kind.toRecord(row, reference),
      });
      return { body: { data: page.data, pagination: page.pagination } };
    },
  });
}

/** GET /v3/fx/{noun}s/{id}: one record of the book, or the 404 `notFound` makes (its code the one in `errors`). */
export function retrieveOperation<Row, Out>(
  context: RecordReadContext,
  kind: RecordKind<Row, Out>,
  errors: readonly [ErrorCode],
  notFound: (id: string) => ApiError,
) {
  return defineOperation({
    method: 'GET',
    path: `/v3/fx/${kind.noun}s/:id`,
    scope: 'view',
    summary: `Retrieve a ${kind.noun}`,
    response: dataOf(kind.schema),
    errors,
    async handle({ principal, params }) {
      const row = await kind.find(context.db, principal, params.id!);
      if (!row) throw notFound(params.id!);
      return { body: { data: kind.toRecord(row, await context.reference()) } };
    },
  });
}

/**
 * A write's promise, with the resource a failed write is about recorded first: a `code` error
 * carries its id in details.resourceId, so the 500 names what to fetch before retrying.
 */
export function namingFailedResource<T>(write: Promise<T>, code: ErrorCode, setResourceId: (id: string) => void) {
  return write.catch((error: unknown) => {
    if (error instanceof ApiError && error.code === code) setResourceId(String(error.details.resourceId));
    throw error;
  });
}
