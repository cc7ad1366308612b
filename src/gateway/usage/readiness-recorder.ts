/**
 * The readiness report: what would break for each legacy key if it moved to the next generation
 * unchanged (v1 -> v2, v2 -> v3). The pipeline checks every request of a known key against the
 * declared blockers (mappings/blockers.ts, src/gateway/legacy/declarations/blockers.ts) and tells this
 * recorder what it met; the report reads those counts beside the usage report's requests per key
 * and operation (usage-recorder.ts), so each operation a key calls is listed, with or without
 * blockers. Touches the legacy_readiness table and reads legacy_usage.
 *
 * Counted as usage is: tallied in memory, written in batches (one statement a flush, every
 * `flushIntervalMs`, and on close, so the drain writes the last), several gateway processes
 * adding to the same rows, a failed batch kept for the next flush.
 */
import type { AdminRoute } from '../../lib/admin/admin-listener.js';
import type { Queryable } from '../../lib/db/database.js';
import { UsageQueryError } from '../../lib/errors/internal-errors.js';
import {
  type BlockerHit,
  type BlockerSeverity,
  migrationGuideLink,
  NEXT_GENERATION,
  type TargetGeneration,
} from '../legacy/declarations/blockers.js';
import { LEGACY_GENERATIONS, type LegacyGeneration } from '../legacy/declarations/legacy-operations.js';
import { type UpsertColumns, UpsertRecorder } from '../tallies.js';
import {
  IDENTITY_COLUMNS,
  parseUsageQuery,
  reportAdminRoute,
  type UsageCaller,
  type UsageRecorder,
  type UsageRecorderOptions,
} from './usage-recorder.js';

export interface ReadinessEvent {
  readonly generation: LegacyGeneration;
  readonly operation: string;
  readonly caller: UsageCaller;
  /** What the request met; an event without hits is not counted. */
  readonly hits: readonly BlockerHit[];
}

/** Where the legacy routes report what each request of a known key met. Must not throw or wait. */
export interface ReadinessObserver {
  met(event: ReadinessEvent): void;
}

export interface ReadinessBlocker {
  readonly kind: string;
  readonly severity: BlockerSeverity;
  /** The requests that met it, since the first counted. */
  readonly count: number;
  /** The last one, masked: method, path template and what was missing or sent. */
  readonly example: string;
  /** The migration guide's section for the operation. */
  readonly guide: string;
  /** ISO 8601. */
  readonly lastSeen: string;
}

export interface ReadinessRow {
  readonly orgId: string;
  readonly keyName: string;
  readonly operation: string;
  /** Every request of the key and operation (the usage report's count). */
  readonly count: number;
  /** ISO 8601. */
  readonly lastSeen: string;
  /** Blockers first, then warnings, each by kind; empty when nothing would break. */
  readonly blockers: readonly ReadinessBlocker[];
}

export interface ReadinessReport {
  /** Rows (and blockers) last seen at or after it (ISO 8601); null for all. */
  readonly since: string | null;
  readonly generation: LegacyGeneration;
  readonly target: TargetGeneration;
  readonly rows: readonly ReadinessRow[];
}

/** The admin listener's route of the report. */
export const READINESS_ADMIN_PATH = '/admin/readiness';

interface Tally {
  readonly orgId: string;
  readonly keyName: string;
  readonly generation: string;
  readonly operation: string;
  readonly kind: string;
  severity: BlockerSeverity;
  count: number;
  firstSeen: number;
  lastSeen: number;
  example: string;
}

/** As the usage report's flush: counts added, the earliest first and the latest last sight (and its example) kept; rows in identity order against deadlocks. */
const FLUSH_SQL = `
INSERT INTO legacy_readiness AS r (org_id, key_name, generation, operation, kind, severity, count, first_seen, last_seen, example)
SELECT org_id, key_name, generation, operation, kind, severity, count, first_seen, last_seen, example
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[], $9::timestamptz[], $10::text[])
       WITH ORDINALITY AS t(org_id, key_name, generation, operation, kind, severity, count, first_seen, last_seen, example, n)
 ORDER BY n
ON CONFLICT (org_id, key_name, generation, operation, kind) DO UPDATE SET
  count = r.count + EXCLUDED.count,
  first_seen = least(r.first_seen, EXCLUDED.first_seen),
  severity = CASE WHEN EXCLUDED.last_seen >= r.last_seen THEN EXCLUDED.severity ELSE r.severity END,
  example = CASE WHEN EXCLUDED.last_seen >= r.last_seen THEN EXCLUDED.example ELSE r.example END,
  last_seen = greatest(r.last_seen, EXCLUDED.last_seen)`;

/** The flush's columns, and what a batch put back takes from the latest sighting. */
const UPSERT: UpsertColumns<Tally> = {
  sql: FLUSH_SQL,
  columns: [...IDENTITY_COLUMNS, 'kind', 'severity', 'count', 'firstSeen', 'lastSeen', 'example'],
  summed: [],
  latest: ['example', 'severity'],
};

export class ReadinessRecorder extends UpsertRecorder<Tally> implements ReadinessObserver {
  constructor(db: Queryable, options: UsageRecorderOptions) {
    super(db, options, UPSERT);
  }

  met(event: ReadinessEvent): void {
    if (event.hits.length === 0) return;
    const at = this.now();
    const orgId = event.caller.orgId.toLowerCase();
    for (const hit of event.hits) {
      const key = [orgId, event.caller.keyName, event.generation, event.operation, hit.kind].join('\u0000');
      const tally = this.pendingTally(key, () => ({
        orgId,
        keyName: event.caller.keyName,
        generation: event.generation,
        operation: event.operation,
        kind: hit.kind,
        severity: hit.severity,
        count: 0,
        firstSeen: at,
        lastSeen: at,
        example: hit.example,
      }));
      tally.count += 1;
      if (at >= tally.lastSeen) {
        tally.lastSeen = at;
        tally.example = hit.example;
        tally.severity = hit.severity;
      }
    }
  }
}

/** What to read: one generation (its target is the next), and the rows last seen since an instant (ms) or all. */
export interface ReadinessQuery {
  readonly generation: LegacyGeneration;
  readonly since?: number;
}

function isoOf(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

const SEVERITY_ORDER: Readonly<Record<BlockerSeverity, number>> = { blocker: 0, warning: 1 };

/** The report as the database holds it: every key's operations of the generation, by org, key and operation. */
export async function readReadiness(db: Queryable, query: ReadinessQuery): Promise<ReadinessReport> {
  const since = query.since === undefined ? null : new Date(query.since).toISOString();
  const window = [query.generation, since];
  const usage = await db.query<{
    org_id: string;
    key_name: string;
    operation: string;
    count: string;
    last_seen: unknown;
  }>(
    `SELECT org_id, key_name, operation, count, last_seen FROM legacy_usage
      WHERE generation = $1::text AND org_id IS NOT NULL AND ($2::timestamptz IS NULL OR last_seen >= $2::timestamptz)
      ORDER BY org_id, key_name, operation`,
    window,
  );
  const met = await db.query<{
    org_id: string;
    key_name: string;
    operation: string;
    kind: string;
    severity: BlockerSeverity;
    count: string;
    last_seen: unknown;
    example: string;
  }>(
    `SELECT org_id, key_name, operation, kind, severity, count, last_seen, example FROM legacy_readiness
      WHERE generation = $1::text AND ($2::timestamptz IS NULL OR last_seen >= $2::timestamptz)`,
    window,
  );
  const identity = (row: { org_id: string; key_name: string; operation: string }) =>
    [row.org_id, row.key_name, row.operation].join('\u0000');
  const blockers = new Map<string, ReadinessBlocker[]>();
  for (const row of met.rows) {
    const list = blockers.get(identity(row)) ?? [];
    list.push({
      kind: row.kind,
      severity: row.severity,
      count: Number(row.count),
      example: row.example,
      guide: migrationGuideLink(query.generation, row.operation),
      lastSeen: isoOf(row.last_seen),
    });
    blockers.set(identity(row), list);
  }
  return {
    since,
    generation: query.generation,
    target: NEXT_GENERATION[query.generation],
    rows: usage.rows.map((row) => ({
      orgId: row.org_id,
      keyName: row.key_name,
      operation: row.operation,
      count: Number(row.count),
      lastSeen: isoOf(row.last_seen),
      blockers: (blockers.get(identity(row)) ?? []).sort(
        (a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.kind.localeCompare(b.kind),
      ),
    })),
  };
}

const GENERATION_HINT = LEGACY_GENERATIONS.map(
  (generation) => `${generation} (its clients move to ${NEXT_GENERATION[generation]})`,
).join(' or ');

/**
 * `generation` (required: the report is of one move) and `since`, as a client sends them, checked
 * as the usage report checks them; UsageQueryError with a message that says what to send.
 */
export function parseReadinessQuery(input: Readonly<Record<string, unknown>>, now: number): ReadinessQuery {
  const generation = input.generation;
  if (generation === undefined) throw new UsageQueryError(`generation is required: ${GENERATION_HINT}`);
  if (typeof generation === 'string' && !(LEGACY_GENERATIONS as readonly string[]).includes(generation))
    throw new UsageQueryError(`generation must be ${GENERATION_HINT}, got ${JSON.stringify(generation.slice(0, 32))}`);
  const parsed = parseUsageQuery(input, now);
  return { ...parsed, generation: parsed.generation as LegacyGeneration };
}

/**
 * `GET /admin/readiness?generation=v1&since=7d` on the admin listener: the report, after this
 * process's pending counts (usage and readiness) are written. A query it cannot read is a 400
 * whose message says what to send.
 */
export function readinessAdminRoute(
  db: Queryable,
  recorders: { readonly usage: UsageRecorder | null; readonly readiness: ReadinessRecorder | null },
  now: () => number = Date.now,
): AdminRoute {
  return reportAdminRoute({
    url: READINESS_ADMIN_PATH,
    parse: parseReadinessQuery,
    flush: () => Promise.all([recorders.usage?.flush(), recorders.readiness?.flush()]),
    read: (query) => readReadiness(db, query),
    now,
  });
}
