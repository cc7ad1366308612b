/**
 * The shadow mode's counts and examples: tallied in memory as comparisons finish, written to the
 * gateway's database in batches (one statement a flush, every `flushIntervalMs`, and on close:
 * src/gateway/tallies.ts's TallyBatcher, as the usage recorders),
 * and read back as the report. Several gateway processes add to the same rows. A flush that
 * fails keeps its batch for the next one, so a database outage costs freshness, not counts.
 */
import type { Queryable } from '../../lib/db/database.js';
import type { FieldDifference } from '../compare/answer-diff.js';
import type { ShadowResult } from '../metrics/gateway-metrics.js';
import { BatchedRecorder, columnsOf } from '../tallies.js';
import { maskExample } from './masking.js';

export interface ShadowExample {
  /** Where in the answer, concretely (`data[id=...].amount`). */
  readonly at: string;
  readonly legacy: string;
  readonly gateway: string;
  readonly seenAt: string;
}

export interface ShadowReportField {
  readonly path: string;
  readonly count: number;
  /** The newest example. */
  readonly example: ShadowExample | null;
  /** The last few, newest first. */
  readonly examples: readonly ShadowExample[];
}

export interface ShadowReportOperation {
  readonly generation: string;
  readonly operation: string;
  readonly compared: number;
  readonly differing: number;
  readonly notCompared: number;
  readonly dropped: number;
  readonly fields: readonly ShadowReportField[];
  readonly noise: readonly { readonly path: string; readonly count: number }[];
}

export interface ShadowReport {
  /** When the first comparison was counted (ISO 8601), null before any. */
  readonly since: string | null;
  readonly operations: readonly ShadowReportOperation[];
}

/** Which operation a count belongs to. */
export interface ShadowOperationName {
  readonly generation: string;
  readonly name: string;
}

interface FieldTally {
  count: number;
  /** Newest first, at most examplesPerField. */
  examples: ShadowExample[];
}

interface OperationTally {
  /** When the batch first counted something of it: the report's `since` is the earliest. */
  readonly since: string;
  compared: number;
  differing: number;
  notCompared: number;
  dropped: number;
  readonly fields: Map<string, FieldTally>;
  readonly noise: Map<string, number>;
}

export interface ShadowRecorderOptions {
  readonly flushIntervalMs: number;
  /** Examples kept per field, in a batch and in the database. */
  readonly examplesPerField: number;
  /** Told when a flush fails (its batch is kept for the next). */
  readonly onFlushError?: (error: unknown) => void;
  /** Told of each count as it is made (the metrics); `differing` comes with its `compared`. */
  readonly onCount?: (operation: ShadowOperationName, result: ShadowResult) => void;
}

const emptyTally = (): OperationTally => ({
  since: new Date().toISOString(),
  compared: 0,
  differing: 0,
  notCompared: 0,
  dropped: 0,
  fields: new Map(),
  noise: new Map(),
});

/** One statement: the operations' counts added, and the fields' counts added with their examples merged, newest first. */
const FLUSH_SQL = `
WITH operations AS (
  INSERT INTO shadow_operations AS o (generation, operation, compared, differing, not_compared, dropped, first_at)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::timestamptz[])
  ON CONFLICT (generation, operation) DO UPDATE SET
    first_at = least(o.first_at, EXCLUDED.first_at),
    compared = o.compared + EXCLUDED.compared,
    differing = o.differing + EXCLUDED.differing,
    not_compared = o.not_compared + EXCLUDED.not_compared,
    dropped = o.dropped + EXCLUDED.dropped,
    last_at = now()
), fields AS (
  INSERT INTO shadow_fields AS f (generation, operation, kind, path, count, examples)
  SELECT generation, operation, kind, path, count, examples::jsonb
    FROM unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::text[]) AS t(generation, operation, kind, path, count, examples)
  ON CONFLICT (generation, operation, kind, path) DO UPDATE SET
    count = f.count + EXCLUDED.count,
    examples = (
      SELECT coalesce(jsonb_agg(kept.example ORDER BY kept.n), '[]'::jsonb)
        FROM jsonb_array_elements(EXCLUDED.examples || f.examples) WITH ORDINALITY AS kept(example, n)
       WHERE kept.n <= $14
    ),
    last_at = now()
)
SELECT 1`;

export class ShadowRecorder extends BatchedRecorder<OperationTally> {
  constructor(
    private readonly db: Queryable,
    private readonly options: ShadowRecorderOptions,
  ) {
    super(options);
  }

  private tally(operation: ShadowOperationName): OperationTally {
    return this.pendingTally(`${operation.generation} ${operation.name}`, emptyTally);
  }

  /**
   * A comparison made: `differences` are the real ones (any number per path; one count per
   * path), `noise` the paths (each once) that differed only as the translation itself moves.
   */
  compared(
    operation: ShadowOperationName,
    differences: readonly FieldDifference[],
    noise: ReadonlySet<string> | readonly string[],
  ): void {
    const tally = this.tally(operation);
    tally.compared += 1;
    this.options.onCount?.(operation, 'compared');
    for (const path of noise) tally.noise.set(path, (tally.noise.get(path) ?? 0) + 1);
    if (differences.length === 0) return;
    tally.differing += 1;
    this.options.onCount?.(operation, 'differing');
    const seenAt = new Date().toISOString();
    const first = new Map<string, FieldDifference>();
    for (const difference of differences) if (!first.has(difference.path)) first.set(difference.path, difference);
    for (const [path, difference] of first) {
      let field = tally.fields.get(path);
      if (field === undefined) {
        field = { count: 0, examples: [] };
        tally.fields.set(path, field);
      }
      field.count += 1;
      const example = {
        at: difference.at,
        legacy: maskExample(path, difference.legacy),
        gateway: maskExample(path, difference.gateway),
        seenAt,
      };
      field.examples = [example, ...field.examples].slice(0, this.options.examplesPerField);
    }
  }

  /** A mirrored read that could not be compared. */
  notCompared(operation: ShadowOperationName): void {
    this.tally(operation).notCompared += 1;
    this.options.onCount?.(operation, 'not_compared');
  }

  /** A read not mirrored: the cap on mirrors in flight was reached. */
  dropped(operation: ShadowOperationName): void {
    this.tally(operation).dropped += 1;
    this.options.onCount?.(operation, 'dropped');
  }

  protected async write(batch: ReadonlyMap<string, OperationTally>): Promise<void> {
    const operations: unknown[][] = [];
    const fields: unknown[][] = [];
    for (const [key, tally] of batch) {
      const [generation, name] = [key.slice(0, key.indexOf(' ')), key.slice(key.indexOf(' ') + 1)];
      operations.push([
        generation,
        name,
        tally.compared,
        tally.differing,
        tally.notCompared,
        tally.dropped,
        tally.since,
      ]);
      for (const [path, field] of tally.fields)
        fields.push([generation, name, 'difference', path, field.count, JSON.stringify(field.examples)]);
      for (const [path, count] of tally.noise) fields.push([generation, name, 'noise', path, count, '[]']);
    }
    await this.db.query(FLUSH_SQL, [
      ...columnsOf(operations, 7),
      ...columnsOf(fields, 6),
      this.options.examplesPerField,
    ]);
  }

  /** A batch that was not written goes back in front of what came since. */
  protected merge(older: OperationTally, tally: OperationTally): void {
    older.compared += tally.compared;
    older.differing += tally.differing;
    older.notCompared += tally.notCompared;
    older.dropped += tally.dropped;
    for (const [path, field] of tally.fields) {
      const kept = older.fields.get(path);
      if (kept === undefined) older.fields.set(path, field);
      else
        older.fields.set(path, {
          count: kept.count + field.count,
          examples: [...field.examples, ...kept.examples].slice(0, this.options.examplesPerField),
        });
    }
    for (const [path, count] of tally.noise) older.noise.set(path, (older.noise.get(path) ?? 0) + count);
  }
}

function examplesOf(value: unknown): ShadowExample[] {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(parsed) ? (parsed as ShadowExample[]) : [];
}

function isoOf(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** The report as the database holds it: operations by generation and name, fields by count. */
export async function readShadowReport(db: Queryable): Promise<ShadowReport> {
  const operations = await db.query<{
    generation: string;
    operation: string;
    compared: string;
    differing: string;
    not_compared: string;
    dropped: string;
    first_at: unknown;
  }>(
    'SELECT generation, operation, compared, differing, not_compared, dropped, first_at FROM shadow_operations ORDER BY generation, operation',
  );
  const fields = await db.query<{
    generation: string;
    operation: string;
    kind: string;
    path: string;
    count: string;
    examples: unknown;
  }>(
    'SELECT generation, operation, kind, path, count, examples FROM shadow_fields ORDER BY generation, operation, kind, count DESC, path',
  );
  let since: string | null = null;
  const report: ShadowReportOperation[] = operations.rows.map((row) => {
    const at = isoOf(row.first_at);
    if (since === null || at < since) since = at;
    const own = fields.rows.filter((field) => field.generation === row.generation && field.operation === row.operation);
    return {
      generation: row.generation,
      operation: row.operation,
      compared: Number(row.compared),
      differing: Number(row.differing),
      notCompared: Number(row.not_compared),
      dropped: Number(row.dropped),
      fields: own
        .filter((field) => field.kind === 'difference')
        .map((field) => {
          const examples = examplesOf(field.examples);
          return { path: field.path, count: Number(field.count), example: examples[0] ?? null, examples };
        }),
      noise: own
        .filter((field) => field.kind === 'noise')
        .map((field) => ({ path: field.path, count: Number(field.count) })),
    };
  });
  return { since, operations: report };
}
