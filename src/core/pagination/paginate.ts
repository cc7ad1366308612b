/**
 * Keyset pagination of the v3 lists (docs/contract.md#pagination-cursor), newest first by
 * (created_at, id). A page is the records on one side of a cursor's position; its flags are exact,
 * not guessed from a short page: limit + 1 rows in the requested direction tell whether more lie
 * that way, and an existence probe on the other side of the same boundary tells whether anything
 * lies back there. Both sides are known before the first query, so the two run at once.
 *
 * Positions, not records: the cursor's record may have left the filter set or the table since the
 * cursor was made, and the page is still exactly the records beyond its position.
 */
import { z } from 'zod';

import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import type { CursorCodec, CursorPosition } from './cursor-codec.js';
import { type CursorParam, type CursorQuery, requestedCursor } from './cursor-query.js';

/** The `pagination` object of every cursor page; the OpenAPI document is generated from it. */
export const paginationInfoSchema = z
  .object({
    hasNext: z.boolean(),
    hasPrev: z.boolean(),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as startingAfter for the older records; null exactly when hasNext is false.' }),
    prevCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as endingBefore for the newer records; null exactly when hasPrev is false.' }),
  })
  .meta({
    id: 'CursorPagination',
    description: 'Where a cursor page sits in its list: exact flags, and the cursors to the older and newer records.',
  });

export type PaginationInfo = Readonly<z.output<typeof paginationInfoSchema>>;

/** The success body of a cursor list: `{"data": [record, ...], "pagination": {...}}`. */
export function cursorPageOf<T extends z.ZodType>(record: T) {
  return z.object({ data: z.array(record), pagination: paginationInfoSchema });
}

export interface Page<Out> {
  readonly data: Out[];
  readonly pagination: PaginationInfo;
}

export interface PaginateSpec<Row, Out> {
  /** A table name or a FROM clause with joins. Trusted SQL: never built from request input. */
  readonly from: string;
  /** The select list; every column of `from` by default. */
  readonly select?: string;
  /** The list's filter over `from`, with placeholders $1..$n bound to params. */
  readonly where?: { readonly sql: string; readonly params: readonly unknown[] };
  /** The sort key's columns, qualified when `from` joins tables. created_at must be timestamptz(3). */
  readonly keyColumns?: { readonly createdAt: string; readonly id: string };
  /** What cursors are bound to (see cursorScope): the list, org, environment and filters. */
  readonly scope: string;
  readonly query: CursorQuery;
  readonly codec: CursorCodec;
  readonly toRecord: (row: Row) => Out;
}

/** 'older' selects records after the boundary in newest-first order, 'newer' those before it. */
type Side = 'older' | 'newer';

interface Range {
  readonly side: Side;
  readonly boundary: CursorPosition;
}

/** The parts of a spec that shape the SQL; free of Row, so the helpers below need no generics. */
type SqlSpec = Pick<PaginateSpec<unknown, unknown>, 'from' | 'select' | 'where' | 'keyColumns'>;

const DEFAULT_KEY_COLUMNS = { createdAt: 'created_at', id: 'id' } as const;
/** Aliases of the key as paginate reads it back; stripped before rows reach toRecord. */
const KEY_MS = 'fxgate_cursor_ms';
const KEY_ID = 'fxgate_cursor_id';

type KeyedRow = Record<string, unknown> & { [KEY_MS]: string; [KEY_ID]: string };

export async function paginate<Row, Out>(db: Queryable, spec: PaginateSpec<Row, Out>): Promise<Page<Out>> {
  const cursor = requestedCursor(spec.query);
  const range: Range | null = cursor && {
    side: cursor.param === 'startingAfter' ? 'older' : 'newer',
    boundary: decode(spec, cursor.param, cursor.value),
  };
  const side = range?.side ?? 'older';
  const limit = spec.query.limit;

  // Nothing lies beyond the newest page's far side, so a first page needs no probe.
  const [rows, behind] = await Promise.all([
    fetchRows(db, spec, side, range, limit + 1),
    range ? anyInRange(db, spec, complement(range)) : false,
  ]);
  const ahead = rows.length > limit;
  const pageRows = rows.slice(0, limit);
  // The newer side is read nearest-first, which is oldest-first; pages are always newest first.
  if (side === 'newer') pageRows.reverse();

  const keys = pageRows.map(keyOf);
  const newest = keys[0];
  const oldest = keys.at(-1);
  // An empty page has no records to point at, so its cursors reuse the boundary it was asked
  // for, turned around: the records it excluded are exactly those the way back must include.
  const turned = range && flipped(range.boundary);
  const nextPosition = oldest ?? turned;
  const prevPosition = newest ?? turned;
  const hasNext = side === 'older' ? ahead : behind;
  const hasPrev = side === 'older' ? behind : ahead;

  return {
    data: pageRows.map((row) => spec.toRecord(stripKey(row))),
    pagination: {
      hasNext,
      hasPrev,
      nextCursor: hasNext && nextPosition ? spec.codec.encode(nextPosition, spec.scope) : null,
      prevCursor: hasPrev && prevPosition ? spec.codec.encode(prevPosition, spec.scope) : null,
    },
  };
}

function decode(
  spec: Pick<PaginateSpec<unknown, unknown>, 'codec' | 'scope'>,
  param: CursorParam,
  value: string,
): CursorPosition {
  const position = spec.codec.decode(value, spec.scope);
  if (position) return position;
  throw new ApiError('VALIDATION_QUERY_FAILED', {
    issues: [
      {
        path: param,
        code: 'invalid_cursor',
        message: `${param} is not a cursor from this list with these filters; pass cursors back exactly as received.`,
      },
    ],
  });
}

async function fetchRows(
  db: Queryable,
  spec: SqlSpec,
  side: Side,
  range: Range | null,
  count: number,
): Promise<KeyedRow[]> {
  const { createdAt, id } = spec.keyColumns ?? DEFAULT_KEY_COLUMNS;
  const columns = `${spec.select ?? '*'}, extract(epoch FROM ${createdAt}) * 1000 AS ${KEY_MS}, ${id}::text AS ${KEY_ID}`;
  const query = nearestFirst(spec, side, range, columns, count);
  return (await db.query<KeyedRow>(query.sql, query.params)).rows;
}

/**
 * Whether any record lies in range. Not EXISTS: PostgreSQL drops ORDER BY inside EXISTS, and
 * without it the planner may pick a sequential scan expecting an early hit, which on a table
 * filled oldest first reads every older row before the first newer one. Reading one row
 * nearest the boundary keeps it a single index probe.
 */
async function anyInRange(db: Queryable, spec: SqlSpec, range: Range): Promise<boolean> {
  const query = nearestFirst(spec, range.side, range, '1', 1);
  return (await db.query(query.sql, query.params)).rows.length > 0;
}

/** Rows on one side of the boundary (all rows without one), nearest to it first. */
function nearestFirst(
  spec: SqlSpec,
  side: Side,
  range: Range | null,
  columns: string,
  count: number,
): { sql: string; params: unknown[] } {
  const { createdAt, id } = spec.keyColumns ?? DEFAULT_KEY_COLUMNS;
  const filter = conditions(spec, range);
  const order = side === 'older' ? 'DESC' : 'ASC';
  return {
    sql: `SELECT ${columns} FROM ${spec.from} WHERE ${filter.sql} ORDER BY ${createdAt} ${order}, ${id} ${order} LIMIT $${filter.params.length + 1}`,
    params: [...filter.params, count],
  };
}

/** The list's filter and the range, as one condition whose placeholders follow the filter's. */
function conditions(spec: SqlSpec, range: Range | null): { sql: string; params: unknown[] } {
  const params = [...(spec.where?.params ?? [])];
  const filter = spec.where ? `(${spec.where.sql})` : 'TRUE';
  if (!range) return { sql: filter, params };
  const { createdAt, id } = spec.keyColumns ?? DEFAULT_KEY_COLUMNS;
  const { boundary } = range;
  const operator = (range.side === 'older' ? '<' : '>') + (boundary.inclusive ? '=' : '');
  params.push(new Date(boundary.createdAtMs).toISOString(), boundary.id);
  // A row comparison, so that PostgreSQL walks the (created_at, id) index from the boundary.
  return {
    sql: `${filter} AND (${createdAt}, ${id}) ${operator} ($${params.length - 1}::timestamptz, $${params.length})`,
    params,
  };
}

/** The other side of the same boundary: together the two ranges cover every record once. */
function complement(range: Range): Range {
  return { side: range.side === 'older' ? 'newer' : 'older', boundary: flipped(range.boundary) };
}

function flipped(position: CursorPosition): CursorPosition {
  return { ...position, inclusive: !position.inclusive };
}

function keyOf(row: KeyedRow): CursorPosition {
  // Numeric text such as "1700000000123.000000"; a non-zero fraction means the column keeps
  // microseconds, which millisecond cursors cannot address: rows would be skipped or repeated.
  const match = /^(-?[0-9]+)(?:\.0*)?$/.exec(row[KEY_MS]);
  if (!match?.[1])
    throw new Error(`created_at of ${row[KEY_ID]} is not at millisecond precision; cursor keys need timestamptz(3).`);
  return { createdAtMs: Number(match[1]), id: row[KEY_ID], inclusive: false };
}

function stripKey<Row>(row: KeyedRow): Row {
  const { [KEY_MS]: _ms, [KEY_ID]: _id, ...rest } = row;
  return rest as Row;
}
