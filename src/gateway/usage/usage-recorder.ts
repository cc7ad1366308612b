/**
 * The legacy usage report: who still calls v1 and v2. Every legacy request is counted per org,
 * key, generation and operation, with the first and last time seen and the last client address;
 * the 410s of brownouts and of the sunset, and the 429s of the key's own rate limit, are counted
 * apart on the same row, so the team sees who was hit. Requests refused before a key was known
 * (no token, a bad or replayed one) are counted with no org and no key.
 *
 * Tallied in memory as requests are answered, written to the gateway's database in batches (one
 * statement a flush, every `flushIntervalMs`, and on close: src/gateway/tallies.ts's TallyBatcher, as
 * the readiness and shadow recorders),
 * never a write per request. Several gateway processes add to the same rows: each flush adds
 * its counts in one upsert, so the totals are exact. A flush that fails keeps its batch for the
 * next one.
 */
import type { AdminRoute } from '../../lib/admin/admin-listener.js';
import type { Queryable } from '../../lib/db/database.js';
import { TimeTextError, UsageQueryError } from '../../lib/errors/internal-errors.js';
import { parseSince } from '../../lib/time-text.js';
import { LEGACY_GENERATIONS } from '../legacy/declarations/legacy-operations.js';
import { type UpsertColumns, UpsertRecorder } from '../tallies.js';

/** Who a request was counted against: the org and the name of the key its verified token named. */
export interface UsageCaller {
  readonly orgId: string;
  readonly keyName: string;
}

export interface UsageEvent {
  readonly generation: string;
  /** The legacy operation (`trades`, `trade/{id}`); NO_OPERATION for a path that names none. */
  readonly operation: string;
  /** Null when the request was refused before a key was known. */
  readonly caller: UsageCaller | null;
  /** The client address (the socket's, or the trusted proxy's X-Forwarded-For). */
  readonly address: string;
  /** Refused by the gateway itself: 410 in a brownout or after the sunset, 429 when the key's (or the address's) rate limit was spent. */
  readonly refused?: 'brownout' | 'sunset' | 'rate_limit';
}

/** Where the legacy routes report each request they answer. Must not throw or wait. */
export interface UsageObserver {
  seen(event: UsageEvent): void;
}

/** The operation of a request under /v1 or /v2 whose path or method names none. */
export const NO_OPERATION = '(no operation)';

export interface UsageRow {
  readonly orgId: string | null;
  readonly keyName: string | null;
  readonly generation: string;
  readonly operation: string;
  /** Every request, the refused ones included. */
  readonly count: number;
  readonly refusedInBrownout: number;
  readonly refusedAfterSunset: number;
  /** Refused with 429: the key's own rate limit (on the row without a key, the client address's). */
  readonly rateLimited: number;
  /** ISO 8601. */
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly lastAddress: string | null;
}

export interface UsageReport {
  /** The start of the rows' window (ISO 8601): rows last seen at or after it; null for every row. */
  readonly since: string | null;
  readonly rows: readonly UsageRow[];
}

export interface UsageRecorderOptions {
  readonly flushIntervalMs: number;
  /** ms since the epoch; Date.now unless given. */
  readonly now?: () => number;
  /** Told when a flush fails (its batch is kept for the next). */
  readonly onFlushError?: (error: unknown) => void;
}

export const USAGE_DEFAULTS = { flushIntervalMs: 1_000 } as const;

/** The admin listener's route of the report. */
export const USAGE_ADMIN_PATH = '/admin/usage';

interface Tally {
  readonly orgId: string | null;
  readonly keyName: string | null;
  readonly generation: string;
  readonly operation: string;
  count: number;
  brownout: number;
  sunset: number;
  rateLimited: number;
  firstSeen: number;
  lastSeen: number;
  lastAddress: string;
}

/**
 * One statement: each row's counts added, the earliest first and latest last sight kept, and the
 * address of the latest. Rows go in the order of their identity, so that two processes flushing
 * at once lock shared rows in the same order instead of deadlocking.
 */
const FLUSH_SQL = `
INSERT INTO legacy_usage AS u (org_id, key_name, generation, operation, count, refused_brownout, refused_sunset, rate_limited, first_seen, last_seen, last_address)
SELECT org_id, key_name, generation, operation, count, brownout, sunset, rate_limited, first_seen, last_seen, last_address
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::timestamptz[], $10::timestamptz[], $11::text[])
       WITH ORDINALITY AS t(org_id, key_name, generation, operation, count, brownout, sunset, rate_limited, first_seen, last_seen, last_address, n)
 ORDER BY n
ON CONFLICT ((coalesce(org_id::text, '')), (coalesce(key_name, '')), generation, operation) DO UPDATE SET
  count = u.count + EXCLUDED.count,
  refused_brownout = u.refused_brownout + EXCLUDED.refused_brownout,
  refused_sunset = u.refused_sunset + EXCLUDED.refused_sunset,
  rate_limited = u.rate_limited + EXCLUDED.rate_limited,
  first_seen = least(u.first_seen, EXCLUDED.first_seen),
  last_address = CASE WHEN EXCLUDED.last_seen >= u.last_seen THEN EXCLUDED.last_address ELSE u.last_address END,
  last_seen = greatest(u.last_seen, EXCLUDED.last_seen)`;

/** A row's org, key, generation and operation: the first columns of the usage and readiness tables. */
export const IDENTITY_COLUMNS = ['orgId', 'keyName', 'generation', 'operation'] as const;

function identity(tally: Pick<Tally, 'orgId' | 'keyName' | 'generation' | 'operation'>): string {
  return [tally.orgId ?? '', tally.keyName ?? '', tally.generation, tally.operation].join('\u0000');
}

/** The flush's columns, and what a batch put back adds up and takes from the latest sighting. */
const UPSERT: UpsertColumns<Tally> = {
  sql: FLUSH_SQL,
  columns: [...IDENTITY_COLUMNS, 'count', 'brownout', 'sunset', 'rateLimited', 'firstSeen', 'lastSeen', 'lastAddress'],
  summed: ['brownout', 'sunset', 'rateLimited'],
  latest: ['lastAddress'],
};

export class UsageRecorder extends UpsertRecorder<Tally> implements UsageObserver {
  constructor(db: Queryable, options: UsageRecorderOptions) {
    super(db, options, UPSERT);
  }

  seen(event: UsageEvent): void {
    const at = this.now();
    const row = {
      orgId: event.caller?.orgId.toLowerCase() ?? null,
      keyName: event.caller?.keyName ?? null,
      generation: event.generation,
      operation: event.operation,
    };
    const tally = this.pendingTally(identity(row), () => ({
      ...row,
      count: 0,
      brownout: 0,
      sunset: 0,
      rateLimited: 0,
      firstSeen: at,
      lastSeen: at,
      lastAddress: event.address,
    }));
    tally.count += 1;
    if (event.refused === 'brownout') tally.brownout += 1;
    if (event.refused === 'sunset') tally.sunset += 1;
    if (event.refused === 'rate_limit') tally.rateLimited += 1;
    if (at < tally.firstSeen) tally.firstSeen = at;
    if (at >= tally.lastSeen) {
      tally.lastSeen = at;
      tally.lastAddress = event.address;
    }
  }
}

/** What to read: one generation or both, and the rows last seen since an instant (ms) or all. */
export interface UsageQuery {
  readonly generation?: string;
  readonly since?: number;
}

function isoOf(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** The report as the database holds it, by generation, then org and key (the unattributed last), then operation. */
export async function readUsage(db: Queryable, query: UsageQuery = {}): Promise<UsageReport> {
  const since = query.since === undefined ? null : new Date(query.since).toISOString();
  const result = await db.query<{
    org_id: string | null;
    key_name: string | null;
    generation: string;
    operation: string;
    count: string;
    refused_brownout: string;
    refused_sunset: string;
    rate_limited: string;
    first_seen: unknown;
    last_seen: unknown;
    last_address: string | null;
  }>(
    `SELECT org_id, key_name, generation, operation, count, refused_brownout, refused_sunset, rate_limited, first_seen, last_seen, last_address
       FROM legacy_usage
      WHERE ($1::text IS NULL OR generation = $1::text) AND ($2::timestamptz IS NULL OR last_seen >= $2::timestamptz)
      ORDER BY generation, org_id NULLS LAST, key_name NULLS LAST, operation`,
    [query.generation ?? null, since],
  );
  return {
    since,
    rows: result.rows.map((row) => ({
      orgId: row.org_id,
      keyName: row.key_name,
      generation: row.generation,
      operation: row.operation,
      count: Number(row.count),
      refusedInBrownout: Number(row.refused_brownout),
      refusedAfterSunset: Number(row.refused_sunset),
      rateLimited: Number(row.rate_limited),
      firstSeen: isoOf(row.first_seen),
      lastSeen: isoOf(row.last_seen),
      lastAddress: row.last_address,
    })),
  };
}

const QUERY_PARAMETERS = ['generation', 'since'] as const;

/**
 * `generation` and `since` as a client sends them (the admin route's query string, the CLI's
 * options), checked: a generation the gateway has, and a since that parseSince reads.
 */
export function parseUsageQuery(input: Readonly<Record<string, unknown>>, now: number): UsageQuery {
  const unknown = Object.keys(input).filter((name) => !(QUERY_PARAMETERS as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new UsageQueryError(
      `unknown parameter ${unknown.map((name) => JSON.stringify(name)).join(', ')}; the report takes generation (v1 or v2) and since (such as 7d)`,
    );
  const single = (name: string): string | undefined => {
    const value = input[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') throw new UsageQueryError(`${name} is given more than once; give it once`);
    return value;
  };
  const generation = single('generation');
  if (generation !== undefined && !(LEGACY_GENERATIONS as readonly string[]).includes(generation)) {
    throw new UsageQueryError(
      `generation must be ${LEGACY_GENERATIONS.join(' or ')}, got ${JSON.stringify(generation.slice(0, 32))}; leave it out for both`,
    );
  }
  const sinceText = single('since');
  let since: number | undefined;
  if (sinceText !== undefined) {
    try {
      since = parseSince(sinceText, now);
    } catch (error) {
      if (error instanceof TimeTextError) throw new UsageQueryError(`since: ${error.message}`);
      throw error;
    }
  }
  return { ...(generation === undefined ? {} : { generation }), ...(since === undefined ? {} : { since }) };
}

/**
 * A report's GET route on the admin listener: the query read from the query string (a query it
 * cannot read is a 400 whose message says what to send), this process's pending counts written,
 * then the report read.
 */
export function reportAdminRoute<Q>(report: {
  readonly url: string;
  readonly parse: (input: Readonly<Record<string, unknown>>, now: number) => Q;
  /** Writes this process's pending counts the report reads. */
  readonly flush: () => Promise<unknown>;
  readonly read: (query: Q) => Promise<unknown>;
  readonly now: () => number;
}): AdminRoute {
  return {
    method: 'GET',
    url: report.url,
    handler: async (request, reply) => {
      let query: Q;
      try {
        query = report.parse(request.query as Record<string, unknown>, report.now());
      } catch (error) {
        if (!(error instanceof UsageQueryError)) throw error;
        return reply.code(400).send({ status: 400, error: 'bad_request', message: error.message });
      }
      await report.flush();
      return report.read(query);
    },
  };
}

/**
 * `GET /admin/usage?generation=v1&since=7d` on the admin listener: the report, after this
 * process's pending counts are written (other processes' reach the database within their flush
 * interval). A query it cannot read is a 400 whose message says what to send.
 */
export function usageAdminRoute(
  db: Queryable,
  recorder: UsageRecorder | null,
  now: () => number = Date.now,
): AdminRoute {
  return reportAdminRoute({
    url: USAGE_ADMIN_PATH,
    parse: parseUsageQuery,
    flush: async () => recorder?.flush(),
    read: (query) => readUsage(db, query),
    now,
  });
}
