/**
 * Legacy `page`/`limit` (docs/contract.md#pagination-legacy) over a v3 cursor list
 * (docs/contract.md#pagination-cursor).
 *
 * A v1/v2 client asks for page N of size L and expects the records at offsets [(N-1)L, NL) and
 * a total. v3 gives neither offsets nor a count: only opaque cursors, newest first, at most 100
 * records a call. Walking from the head on every request would cost ceil(NL/100) calls per
 * page, so the walker keeps a per-list snapshot in the ephemeral store instead.
 *
 * Why a snapshot stays right: the lists served only grow at the head (new records are newest,
 * records are never deleted, the filters never drop one). A cursor names a record, so once
 * obtained it keeps pointing at the same record, and everything older than it never changes
 * order. The snapshot stores `{headId, known, ended, cursors: {offset: cursor}, refreshedAt}`:
 * the records at offsets [0, known) have been walked, `ended` says whether the list was seen to
 * end at `known` (hasNext false), and cursors[o] starts its next page at offset o (the head,
 * offset 0, needs none). While the end is not known, the cursor at `known` (the frontier) is
 * always kept. When k records appear at the head, every cached offset and `known` are still
 * right after adding k; and reading the newest page tells k: it is where the old headId sits.
 *
 * Totals, chosen once per walker (`totals`):
 * - 'bounded' (default): `total` is exact (`known`) once the end has been seen, by this or any
 *   earlier request on the snapshot; until then it is `known + 1`, a lower bound (v3 said there
 *   is more) that makes ceil(total/L) exceed every page walked, so a client walking by the total
 *   always asks for the next page. Each page past `known` extends it.
 * - 'exact': a cold request walks to the end, so `total` is always exact.
 *
 * - Cold (no snapshot, or one that cannot be used): walk from the head with limit 100, keeping
 *   the cursor at every response boundary. 'bounded' stops once the page's end is covered or
 *   the list ends: at most ceil(NL/100) calls for page N. 'exact' goes on to the end:
 *   max(1, ceil(total/100)) calls. (Costs here assume v3 fills its pages, as ours does; a v3
 *   that answers fewer records per call costs proportionally more calls.)
 * - Page 1, or a snapshot older than refreshAfterMs: read the newest 100 records first. The old
 *   head at index k shifts everything by k; not found with more records behind means 100 or more
 *   new records (or a list the snapshot cannot follow) and the walk goes cold, reusing that page.
 *   The head page also answers any page inside it.
 * - A page at or past the end of a list whose end is known: no call.
 * - Otherwise: start at the cached cursor nearest below the page (the frontier for a page past
 *   `known`) and fetch just up to its end, in reads of at most 100, caching the cursor each
 *   response ends on: at most ceil((NL - cursor)/100) calls. The response for page N ends at offset NL,
 *   where page N+1 starts, so a sequential walk costs one call per page. A page whose only
 *   cursor below is the head reads the head with limit NL (its response again ends at the
 *   page's end) and, having seen the head, applies the new records like a refresh.
 *
 * Within refreshAfterMs, pages served from cursors show the snapshot's view (its total, records
 * newer than its head not counted); page 1 always shows the current list. Concurrent requests
 * may overwrite each other's snapshot; every snapshot any of them writes is a valid view, so the
 * worst case is a refresh or a cursor redone (or a total that is a lower bound again).
 *
 * Cursor count is bounded so the JSON stays small: cursors found by walking into records not yet
 * known (every cold read, every read past the frontier) are boundaries, kept while they are at
 * least 100 records from their neighbours (a page inside `known` is then one or two calls away);
 * besides them the frontier, and the most recently used maxRecentCursors others.
 *
 * The snapshot is a cache, never a source of truth: a store that is down, a record that does
 * not parse, a cursor v3 refuses, or an end of list that disagrees with the snapshot (before
 * `known`, or after it once the end was seen) all lead to one cold walk. An 'exact' walker
 * treats a snapshot whose end is not known (written by a 'bounded' one) as none. An upstream
 * that loops (hasNext without a cursor, ids repeated, no end within maxCallsPerRequest calls)
 * is a PageWalkError rather than a request that never ends.
 */
import { z } from 'zod';

import {
  CursorRejectedError,
  PageWalkError,
  SnapshotMismatchError,
  StoreUnavailableError,
} from '../../../lib/errors/internal-errors.js';
import { type EphemeralStore } from '../../../lib/store/ephemeral-store.js';

/** One v3 cursor page as the list endpoint answers it (docs/contract.md#pagination-cursor). */
export interface CursorListPage {
  readonly data: readonly { readonly id: string }[];
  readonly pagination: {
    readonly hasNext: boolean;
    readonly hasPrev: boolean;
    readonly nextCursor: string | null;
    readonly prevCursor: string | null;
  };
}

/** Fetches one v3 page, newest first; `startingAfter` absent means the newest page. */
export type FetchCursorPage = (query: {
  readonly limit: number;
  readonly startingAfter?: string;
}) => Promise<CursorListPage>;

export interface PageRequest {
  /** 1-based page number. */
  readonly page: number;
  /** Page size, 1 to 50. */
  readonly limit: number;
}

export interface PageResult {
  /** The v3 records of the page, newest first, at most `limit`. */
  readonly records: readonly { readonly id: string }[];
  /**
   * Number of records in the list (as of the snapshot the page was served from): exact when
   * `totalExact`, else the records known plus one, a lower bound ('bounded' totals only).
   */
  readonly total: number;
  /** The end of the list has been seen, so `total` is exact; always true with 'exact' totals. */
  readonly totalExact: boolean;
  /** v3 calls this request made (for tests, logs and the bench). */
  readonly upstreamCalls: number;
}

/**
 * How `total` is found. 'bounded': a cold page N costs at most ceil(N*limit/100) calls and the
 * total is a lower bound until some request has walked to the end. 'exact': a cold request walks
 * the whole list, max(1, ceil(total/100)) calls, and the total is always exact.
 */
export const PAGE_TOTALS_MODES = ['bounded', 'exact'] as const;
export type PageTotalsMode = (typeof PAGE_TOTALS_MODES)[number];

export interface PageWalkerOptions {
  readonly store: EphemeralStore;
  /** How `total` is found and what a cold request costs (see PAGE_TOTALS_MODES). */
  readonly totals?: PageTotalsMode;
  /** How long a list's snapshot lives in the store after the request that last wrote it. */
  readonly snapshotTtlMs?: number;
  /** Age after which a snapshot's head is re-read before a page other than 1 is served. */
  readonly refreshAfterMs?: number;
  /**
   * v3 calls one request may make; bounds a misbehaving upstream, the longest list 'exact' can
   * count and the deepest page a cold 'bounded' request can reach (100 records a call).
   */
  readonly maxCallsPerRequest?: number;
  /** Cursors kept per list besides the 100-record boundaries, most recently used first. */
  readonly maxRecentCursors?: number;
  /** The clock in milliseconds; tests inject one to age snapshots without sleeping. */
  readonly now?: () => number;
}

export const PAGE_WALKER_DEFAULTS = {
  totals: 'bounded' as PageTotalsMode,
  snapshotTtlMs: 10 * 60_000,
  refreshAfterMs: 60_000,
  maxCallsPerRequest: 1_000,
  maxRecentCursors: 64,
} as const;

/** The largest page v3 serves (docs/contract.md#pagination-cursor): every read that only counts uses it. */
const V3_MAX_LIMIT = 100;
/** Legacy page sizes; the one-call-per-page walk relies on L <= V3_MAX_LIMIT. */
export const LEGACY_MAX_LIMIT = 50;

type ListRecord = { readonly id: string };

/** A v3 page reduced to what the walk needs; `next` undefined is the end of the list. */
interface Step {
  readonly data: readonly ListRecord[];
  readonly next: string | undefined;
}

/** Where a read can start: offset 0 is the head (no cursor). */
interface Position {
  readonly offset: number;
  readonly cursor: string | undefined;
}

interface Window {
  readonly start: number;
  readonly end: number;
  readonly first: boolean;
}

interface Served {
  readonly snapshot: Snapshot;
  readonly records: readonly ListRecord[];
}

const snapshotSchema = z
  .object({
    v: z.literal(2),
    headId: z.string().min(1).nullable(),
    known: z.number().int().nonnegative(),
    ended: z.boolean(),
    refreshedAt: z.number(),
    cursors: z.record(z.string().regex(/^[1-9][0-9]{0,14}$/), z.string().min(1)),
    recent: z.array(z.number().int().positive()),
  })
  .refine((s) => (s.known === 0) === (s.headId === null), 'headId is null exactly when no record is known')
  .refine(
    (s) => Object.keys(s.cursors).every((offset) => Number(offset) <= s.known),
    'a cursor lies beyond the known records',
  )
  .refine(
    (s) => s.ended || s.cursors[String(s.known)] !== undefined,
    'a list whose end is not known keeps the cursor at its frontier',
  )
  .refine((s) => s.recent.every((offset) => s.cursors[String(offset)] !== undefined), 'recent names a missing cursor');

type SnapshotRecord = z.infer<typeof snapshotSchema>;

class Snapshot {
  private constructor(
    public headId: string | null,
    /** Records at offsets [0, known) have been walked. */
    public known: number,
    /** The list was seen to end at `known`: `known` is the exact total. */
    public ended: boolean,
    public refreshedAt: number,
    private cursors: Map<number, string>,
    /** Offsets that are not boundaries, least recently used first. */
    private recent: number[],
  ) {}

  static empty(now: number): Snapshot {
    return new Snapshot(null, 0, false, now, new Map(), []);
  }

  /** The whole list seen in one page: nothing else needs remembering. */
  static whole(data: readonly ListRecord[], now: number): Snapshot {
    return new Snapshot(data[0]?.id ?? null, data.length, true, now, new Map(), []);
  }

  static parse(text: string): Snapshot | null {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return null;
    }
    const parsed = snapshotSchema.safeParse(json);
    if (!parsed.success) return null;
    const { headId, known, ended, refreshedAt, cursors, recent } = parsed.data;
    const map = new Map(Object.entries(cursors).map(([offset, cursor]) => [Number(offset), cursor] as const));
    return new Snapshot(headId, known, ended, refreshedAt, map, [...new Set(recent)]);
  }

  /** What the client is told: exact once the end was seen, else a lower bound (v3 said hasNext). */
  get total(): number {
    return this.ended ? this.known : this.known + 1;
  }

  /** The nearest start at or before offset. */
  best(offset: number): Position {
    let found: Position = { offset: 0, cursor: undefined };
    for (const [at, cursor] of this.cursors) {
      if (at <= offset && at > found.offset) found = { offset: at, cursor };
    }
    return found;
  }

  /**
   * Remembers a cursor. A later cursor for an offset replaces the earlier one: both name the same
   * record, and the newer is the less likely to have expired.
   */
  put(offset: number, cursor: string, kind: 'boundary' | 'recent'): void {
    if (offset <= 0) return;
    const wasBoundary = this.cursors.has(offset) && !this.recent.includes(offset);
    this.cursors.set(offset, cursor);
    if (kind === 'boundary') this.recent = this.recent.filter((at) => at !== offset);
    else if (!wasBoundary) this.recent = [...this.recent.filter((at) => at !== offset), offset];
  }

  /** Marks a cursor used, so that eviction spares the one a sequential walk is about to need. */
  touch(offset: number): void {
    if (this.recent.includes(offset)) this.recent = [...this.recent.filter((at) => at !== offset), offset];
  }

  /** k records appeared at the head: every cursor's record now sits k further down. */
  shift(k: number): void {
    if (k === 0) return;
    this.cursors = new Map([...this.cursors].map(([at, cursor]) => [at + k, cursor]));
    this.recent = this.recent.map((at) => at + k);
    this.known += k;
  }

  toRecord(maxRecent: number): SnapshotRecord {
    const recent = maxRecent > 0 ? this.recent.slice(-maxRecent) : [];
    const recentSet = new Set(this.recent);
    const boundaries = [...this.cursors.keys()].filter((at) => !recentSet.has(at)).sort((a, b) => a - b);
    // A boundary goes when its neighbours are within one full read of each other: coverage stays
    // one call per 100 records, and repeated refreshes cannot pile boundaries up near the head.
    const kept: number[] = [];
    let previous = 0;
    boundaries.forEach((at, index) => {
      const next = boundaries[index + 1] ?? this.known;
      if (next - previous > V3_MAX_LIMIT) {
        kept.push(at);
        previous = at;
      }
    });
    // The frontier is the only way past `known` without walking from the head again.
    if (!this.ended) kept.push(this.known);
    const cursors: Record<string, string> = {};
    for (const at of [...kept, ...recent]) {
      const cursor = this.cursors.get(at);
      if (cursor !== undefined && at <= this.known) cursors[String(at)] = cursor;
    }
    return {
      v: 2,
      headId: this.headId,
      known: this.known,
      ended: this.ended,
      refreshedAt: this.refreshedAt,
      cursors,
      recent: recent.filter((at) => cursors[String(at)] !== undefined),
    };
  }
}

/** The v3 calls of one request: counted, bounded and checked for an upstream that would loop. */
class Upstream {
  calls = 0;

  constructor(
    private readonly fetchPage: FetchCursorPage,
    private readonly maxCalls: number,
  ) {}

  /** `seen` spans one contiguous walk: an id met twice there means v3 went in circles. */
  async fetch(limit: number, startingAfter: string | undefined, seen: Set<string>): Promise<Step> {
    if (this.calls >= this.maxCalls) throw new PageWalkError(`The v3 list did not end within ${this.maxCalls} calls`);
    this.calls += 1;
    const page = await this.fetchPage(startingAfter === undefined ? { limit } : { limit, startingAfter });
    const { hasNext, nextCursor } = page.pagination;
    if (hasNext && (nextCursor === null || nextCursor === ''))
      throw new PageWalkError('v3 said hasNext but gave no nextCursor');
    for (const { id } of page.data) {
      if (seen.has(id)) throw new PageWalkError(`v3 returned record ${id} twice in one walk`);
      seen.add(id);
    }
    const next = hasNext ? (nextCursor ?? undefined) : undefined;
    if (next !== undefined && page.data.length === 0 && next === startingAfter) {
      throw new PageWalkError('v3 returned an empty page pointing back at the same cursor');
    }
    return { data: page.data, next };
  }
}

/** Appends the records of a page at `offset` that fall inside [from, to). */
function collect(into: ListRecord[], data: readonly ListRecord[], offset: number, from: number, to: number): void {
  for (let i = Math.max(0, from - offset); i < data.length && offset + i < to; i += 1) {
    const record = data[i];
    if (record !== undefined) into.push(record);
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

export class PageWalker {
  /** How totals are found, resolved at construction. */
  readonly totals: PageTotalsMode;
  private readonly store: EphemeralStore;
  private readonly snapshotTtlMs: number;
  private readonly refreshAfterMs: number;
  private readonly maxCallsPerRequest: number;
  private readonly maxRecentCursors: number;
  private readonly now: () => number;

  constructor(options: PageWalkerOptions) {
    this.store = options.store;
    this.totals = options.totals ?? PAGE_WALKER_DEFAULTS.totals;
    if (!PAGE_TOTALS_MODES.includes(this.totals))
      throw new RangeError(`totals must be one of ${PAGE_TOTALS_MODES.join(', ')}, got ${String(this.totals)}`);
    this.snapshotTtlMs = positiveInteger('snapshotTtlMs', options.snapshotTtlMs ?? PAGE_WALKER_DEFAULTS.snapshotTtlMs);
    this.refreshAfterMs = options.refreshAfterMs ?? PAGE_WALKER_DEFAULTS.refreshAfterMs;
    if (!Number.isFinite(this.refreshAfterMs) || this.refreshAfterMs < 0)
      throw new RangeError(`refreshAfterMs must be >= 0, got ${this.refreshAfterMs}`);
    this.maxCallsPerRequest = positiveInteger(
      'maxCallsPerRequest',
      options.maxCallsPerRequest ?? PAGE_WALKER_DEFAULTS.maxCallsPerRequest,
    );
    this.maxRecentCursors = options.maxRecentCursors ?? PAGE_WALKER_DEFAULTS.maxRecentCursors;
    if (!Number.isSafeInteger(this.maxRecentCursors) || this.maxRecentCursors < 0) {
      throw new RangeError(`maxRecentCursors must be a whole number, got ${this.maxRecentCursors}`);
    }
    this.now = options.now ?? Date.now;
  }

  /** `listKey` names the list: org, mode, operation and filters (the caller builds it). */
  async page(listKey: string, request: PageRequest, fetch: FetchCursorPage): Promise<PageResult> {
    positiveInteger('page', request.page);
    if (positiveInteger('limit', request.limit) > LEGACY_MAX_LIMIT)
      throw new RangeError(`limit must be at most ${LEGACY_MAX_LIMIT}, got ${request.limit}`);
    if (!Number.isSafeInteger(request.page * request.limit))
      throw new RangeError(`page ${request.page} is out of range`);
    const start = (request.page - 1) * request.limit;
    const window: Window = { start, end: start + request.limit, first: request.page === 1 };
    const upstream = new Upstream(fetch, this.maxCallsPerRequest);

    const loaded = await this.load(listKey);
    let served: Served;
    try {
      served =
        loaded.snapshot === null
          ? await this.cold(upstream, window)
          : await this.warm(upstream, loaded.snapshot, window);
    } catch (error) {
      // Only what the snapshot got wrong is worth one cold walk; a cold walk's own failure is v3's.
      const snapshotFault = error instanceof CursorRejectedError || error instanceof SnapshotMismatchError;
      if (loaded.snapshot === null || !snapshotFault) throw error;
      served = await this.cold(upstream, window);
    }
    if (upstream.calls > 0 && loaded.writable) await this.save(listKey, served.snapshot);
    return {
      records: served.records,
      total: served.snapshot.total,
      totalExact: served.snapshot.ended,
      upstreamCalls: upstream.calls,
    };
  }

  private async warm(upstream: Upstream, snapshot: Snapshot, window: Window): Promise<Served> {
    const stale = this.now() - snapshot.refreshedAt > this.refreshAfterMs;
    if (window.first || stale) return this.fromHead(upstream, snapshot, V3_MAX_LIMIT, window);
    if (snapshot.ended && window.start >= snapshot.known) return { snapshot, records: [] };
    // Past `known` (end not seen), the nearest is the frontier.
    const from = snapshot.best(window.start);
    // Limit NL, not 100: the response then ends where the next page starts and leaves its cursor.
    if (from.offset === 0) return this.fromHead(upstream, snapshot, Math.min(V3_MAX_LIMIT, window.end), window);
    const records = await this.walk(upstream, snapshot, from, window.start, window.end, new Set());
    return { snapshot, records };
  }

  /** Reads the newest `limit` records, brings the snapshot up to date with them, then serves. */
  private async fromHead(upstream: Upstream, snapshot: Snapshot, limit: number, window: Window): Promise<Served> {
    const seen = new Set<string>();
    const head = await upstream.fetch(limit, undefined, seen);
    const current = this.place(snapshot, head, limit);
    if (current === null) {
      // A short read may just be too short to reach the old head; a full one decides.
      if (limit < V3_MAX_LIMIT) return this.fromHead(upstream, snapshot, V3_MAX_LIMIT, window);
      return this.cold(upstream, window, { step: head, seen });
    }
    const size = head.data.length;
    const records: ListRecord[] = [];
    collect(records, head.data, 0, window.start, window.end);
    if (window.end <= size || head.next === undefined || (current.ended && window.start >= current.known))
      return { snapshot: current, records };
    const walkStart = Math.max(window.start, size);
    const from = current.best(walkStart);
    const more = await this.walk(
      upstream,
      current,
      from,
      walkStart,
      window.end,
      from.offset === size ? seen : new Set(),
    );
    return { snapshot: current, records: [...records, ...more] };
  }

  /**
   * Applies a head page to the snapshot: the snapshot, updated, or a new one when the page holds
   * the whole list; null when the page cannot be placed (the old head is not in it).
   */
  private place(snapshot: Snapshot, head: Step, limit: number): Snapshot | null {
    const now = this.now();
    if (head.next === undefined) return Snapshot.whole(head.data, now);
    const newest = head.data[0];
    if (newest === undefined || snapshot.headId === null) return null;
    const k = head.data.findIndex((record) => record.id === snapshot.headId);
    if (k < 0) return null;
    // The page holds more records below the old head than the list was seen to end with.
    if (snapshot.ended && snapshot.known + k < head.data.length) return null;
    snapshot.shift(k);
    snapshot.headId = newest.id;
    snapshot.refreshedAt = now;
    snapshot.put(head.data.length, head.next, limit === V3_MAX_LIMIT ? 'boundary' : 'recent');
    // The end not seen: a head page longer than what was known moves the frontier to its end.
    snapshot.known = Math.max(snapshot.known, head.data.length);
    return snapshot;
  }

  /**
   * Reads from `from` until `to`, keeping each response's cursor, checking the snapshot: an end
   * before `known`, or anything but `known` once the end was seen, is a mismatch. Past `known`
   * (end not seen), each read extends what is known.
   */
  private async walk(
    upstream: Upstream,
    snapshot: Snapshot,
    from: Position,
    collectFrom: number,
    to: number,
    seen: Set<string>,
  ): Promise<ListRecord[]> {
    const records: ListRecord[] = [];
    let { offset, cursor } = from;
    snapshot.touch(offset);
    while (offset < to) {
      const step = await upstream.fetch(Math.min(V3_MAX_LIMIT, to - offset), cursor, seen);
      collect(records, step.data, offset, collectFrom, to);
      offset += step.data.length;
      if (step.next === undefined) {
        const agrees = snapshot.ended ? offset === snapshot.known : offset >= snapshot.known;
        if (!agrees)
          throw new SnapshotMismatchError(
            `The list ended at ${offset}, the snapshot says ${snapshot.ended ? '' : 'at least '}${snapshot.known}`,
          );
        snapshot.known = offset;
        snapshot.ended = true;
        break;
      }
      cursor = step.next;
      if (offset > snapshot.known) {
        if (snapshot.ended) throw new SnapshotMismatchError(`The list goes on past ${snapshot.known}`);
        snapshot.known = offset;
        snapshot.put(offset, cursor, 'boundary');
      } else {
        snapshot.put(offset, cursor, 'recent');
      }
    }
    return records;
  }

  /**
   * Walks from the head with full pages, keeping a cursor per page: to the end ('exact'), or
   * until the page's end is covered ('bounded'); `first` is a head page already read.
   */
  private async cold(upstream: Upstream, window: Window, first?: { step: Step; seen: Set<string> }): Promise<Served> {
    const snapshot = Snapshot.empty(this.now());
    const seen = first?.seen ?? new Set<string>();
    const records: ListRecord[] = [];
    let offset = 0;
    let step = first?.step;
    let cursor: string | undefined;
    for (;;) {
      step ??= await upstream.fetch(V3_MAX_LIMIT, cursor, seen);
      const newest = step.data[0];
      if (snapshot.headId === null && newest !== undefined) snapshot.headId = newest.id;
      collect(records, step.data, offset, window.start, window.end);
      offset += step.data.length;
      if (step.next === undefined) {
        snapshot.ended = true;
        break;
      }
      cursor = step.next;
      snapshot.put(offset, cursor, 'boundary');
      step = undefined;
      if (this.totals === 'bounded' && offset >= window.end) break;
    }
    snapshot.known = offset;
    return { snapshot, records };
  }

  /**
   * Reads fail open: a store that is down means a cold walk, and no write to a dead store. An
   * 'exact' walker cannot serve a total from a snapshot whose end is not known: none, then.
   */
  private async load(listKey: string): Promise<{ snapshot: Snapshot | null; writable: boolean }> {
    let text: string | null;
    try {
      text = await this.store.cacheGet(listKey);
    } catch (error) {
      if (error instanceof StoreUnavailableError) return { snapshot: null, writable: false };
      throw error;
    }
    const snapshot = text === null ? null : Snapshot.parse(text);
    return {
      snapshot: snapshot !== null && (snapshot.ended || this.totals === 'bounded') ? snapshot : null,
      writable: true,
    };
  }

  private async save(listKey: string, snapshot: Snapshot): Promise<void> {
    try {
      await this.store.cacheSet(listKey, JSON.stringify(snapshot.toRecord(this.maxRecentCursors)), this.snapshotTtlMs);
    } catch (error) {
      // The answer is already right; a lost snapshot only costs the next request a cold walk.
      if (!(error instanceof StoreUnavailableError)) throw error;
    }
  }
}
