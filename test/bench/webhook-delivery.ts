/**
 * The webhook-delivery case's measurement: how fast the core's delivery worker drains a backlog
 * of events into a local receiver. No request goes from here to the core: this (the load)
 * process writes events into the case's database with the outbox's own recordEvent, and watches
 * the deliveries table until the worker, in the core process, has delivered them all.
 *
 * A backlog is written in ONE transaction (a recordEvent call an event), so that the worker,
 * which is on and polling, sees none of it until the COMMIT and then all of it at once: that
 * COMMIT starts the clock. (Separate commits would let the worker start on the first batch while
 * the rest is still being written, and the run would time the writing.) The clock stops at the
 * first poll that finds no delivery PENDING. Warm-up backlogs first, as the other cases warm up:
 * until warmupSeconds of draining (two at least), each sized to a second at the rate of the one
 * before; the measured backlog is sized to last durationSeconds at the last warm-up rate.
 */
import { performance } from 'node:perf_hooks';

import { recordEvent } from '../../src/core/events/outbox.js';
import type { Database } from '../../src/lib/db/database.js';
import { newId } from '../../src/lib/ids.js';
import { type CaseMeasurement, type LoadSettings, percentile, type RowMeasurement } from './measurement.js';
import type { SelfMeasuredPlan } from './requests.js';

/** How often the deliveries table is polled for the end of a drain: the clock's resolution. */
export const DRAIN_POLL_MS = 20;
/** The first warm-up backlog, before any rate is known: small, as a cold worker is slow. */
const FIRST_WARMUP_EVENTS = 500;
/** Seconds of draining per later warm-up backlog. */
const WARMUP_ROUND_SECONDS = 1;
/** The first backlog drains on a cold worker: its rate is never the estimate. */
const MIN_WARMUP_ROUNDS = 2;
/** The measured backlog has at least this many events, however slow the warm-up was. */
const MIN_MEASURED_EVENTS = 1_000;
/**
 * A drain may take this long, plus a millisecond an event, before the case fails: a failed
 * attempt is retried only seconds later, so a receiver that refuses shows up as a stall here.
 */
const DRAIN_TIMEOUT_BASE_MS = 60_000;
const FAILURE_SAMPLES = 3;

export interface WebhookBacklogSetup {
  /** The case's database, opened in this (the load) process. */
  readonly db: Database;
  /** The bench org: its live book has the one webhook endpoint, every event type. */
  readonly orgId: string;
  /** The receiver's GET that answers {hits, events}. */
  readonly receiverHitsUrl: string;
}

interface ReceiverCount {
  readonly hits: number;
  readonly events: number;
}

interface Release {
  readonly events: number;
  /** Deliveries of this backlog have ids above this one (the column is an identity). */
  readonly afterId: string;
  /** Epoch ms right after the COMMIT. */
  readonly releasedAt: number;
  readonly insertSeconds: number;
}

interface Drain extends Release {
  /** Seconds from the COMMIT to the poll that found nothing PENDING. */
  readonly seconds: number;
}

/**
 * What a withdrawal.completed event carries: a USD FEDWIRE withdrawal record as the API shows it
 * (an envelope of about 800 bytes), each with its own ids.
 */
function withdrawalCompleted(orgId: string, at: Date): Record<string, unknown> {
  const iso = at.toISOString();
  return {
    object: 'withdrawal',
    id: newId('withdrawal', at.getTime()),
    currency: 'USD',
    assetType: 'FIAT',
    withdrawalAmount: '1.00',
    status: 'COMPLETED',
    network: null,
    withdrawalAccountId: 'wac_0190a0b0c0d07e0f8a9b0c1d2e3f4a5b',
    estimatedCompletionAt: iso,
    transactionHash: null,
    paymentDetails: { FEDWIRE: { imad: '20240101MMQFMP2K000001', omad: '20240101QMGFT015000001' } },
    actorId: `usr_${orgId.replaceAll('-', '')}`,
    actorEmail: 'bench@api-keys.fxgate.invalid',
    comments: '',
    createdAt: iso,
    metadata: {},
    updatedAt: iso,
    completedAt: iso,
    failureReason: null,
  };
}

async function receiverCount(url: string): Promise<ReceiverCount> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  const body = (await response.json()) as Partial<ReceiverCount>;
  if (typeof body.hits !== 'number' || typeof body.events !== 'number')
    throw new Error(`GET ${url} answered ${JSON.stringify(body)}`);
  return { hits: body.hits, events: body.events };
}

/** Writes `events` events in one transaction; each must fan out to exactly one delivery. */
async function release(setup: WebhookBacklogSetup, events: number): Promise<Release> {
  const { db, orgId } = setup;
  const { rows } = await db.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM webhook_deliveries');
  const afterId = rows[0]!.id;
  const started = performance.now();
  await db.transaction(async (tx) => {
    // One statement at a time: a pg client given several at once queues them (deprecated).
    for (let event = 0; event < events; event += 1) {
      const at = new Date();
      await recordEvent(tx, {
        orgId,
        environment: 'live',
        type: 'withdrawals',
        eventType: 'withdrawal.completed',
        data: withdrawalCompleted(orgId, at),
        at,
      });
    }
    const { rows: fanned } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE id > $1',
      [afterId],
    );
    if (fanned[0]!.n !== events)
      throw new Error(
        `${events} events fanned out to ${fanned[0]!.n} deliveries, not one each: is the bench endpoint registered?`,
      );
  });
  const releasedAt = Date.now();
  return { events, afterId, releasedAt, insertSeconds: (performance.now() - started) / 1000 };
}

/** Why a drain is stuck: the backlog's deliveries by status, and its first failed attempts. */
async function stallReport(db: Database, afterId: string): Promise<string> {
  const { rows: statuses } = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE id > $1 GROUP BY status ORDER BY status',
    [afterId],
  );
  const { rows: failures } = await db.query<{ status_code: number | null; error: string | null }>(
    `SELECT status_code, error FROM webhook_delivery_attempts
      WHERE delivery_id > $1 AND (error IS NOT NULL OR status_code NOT BETWEEN 200 AND 299) ORDER BY id LIMIT ${FAILURE_SAMPLES}`,
    [afterId],
  );
  const counts = statuses.map((row) => `${row.n} ${row.status}`).join(', ');
  const samples = failures.map((row) => row.error ?? `HTTP ${row.status_code}`).join(' | ');
  return `deliveries ${counts || 'none'}${samples ? `; failed attempts: ${samples}` : ''}`;
}

/** Polls until no delivery is PENDING, then checks that every one of the backlog was DELIVERED. */
async function drain(setup: WebhookBacklogSetup, backlog: Release): Promise<Drain> {
  const { db } = setup;
  const deadline = backlog.releasedAt + DRAIN_TIMEOUT_BASE_MS + backlog.events;
  for (;;) {
    // The database is the case's own: every delivery in it is the bench's. The partial index
    // of due deliveries (status PENDING) answers this without reading the delivered ones.
    const { rows } = await db.query<{ pending: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE status = 'PENDING') AS pending",
    );
    const now = Date.now();
    if (!rows[0]!.pending) {
      const { rows: delivered } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE id > $1 AND status = 'DELIVERED'",
        [backlog.afterId],
      );
      if (delivered[0]!.n !== backlog.events)
        throw new Error(
          `a backlog of ${backlog.events} events drained with ${delivered[0]!.n} delivered: ${await stallReport(db, backlog.afterId)}`,
        );
      return { ...backlog, seconds: Math.max((now - backlog.releasedAt) / 1000, 1e-3) };
    }
    if (now > deadline) {
      throw new Error(
        `a backlog of ${backlog.events} events was not delivered within ${((deadline - backlog.releasedAt) / 1000).toFixed(0)} s: ${await stallReport(db, backlog.afterId)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
}

async function backlogDrained(setup: WebhookBacklogSetup, events: number): Promise<Drain> {
  return drain(setup, await release(setup, events));
}

/** The measured drain as a row, from the rows the worker wrote; and what else the report says. */
async function measuredRow(
  setup: WebhookBacklogSetup,
  run: Drain,
  received: ReceiverCount,
): Promise<{ row: RowMeasurement; notes: string[] }> {
  const { db } = setup;
  const { rows: delivered } = await db.query<{ at_ms: number }>(
    "SELECT (extract(epoch FROM delivered_at) * 1000)::float8 AS at_ms FROM webhook_deliveries WHERE id > $1 AND status = 'DELIVERED'",
    [run.afterId],
  );
  const latencies = delivered.map((row) => Math.max(0, row.at_ms - run.releasedAt)).sort((a, b) => a - b);
  const { rows: attempts } = await db.query<{ status_code: number | null; error: string | null; duration_ms: number }>(
    'SELECT status_code, error, duration_ms FROM webhook_delivery_attempts WHERE delivery_id > $1',
    [run.afterId],
  );
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  for (const attempt of attempts) {
    if (attempt.error !== null) {
      errors += 1;
      if (attempt.error.startsWith('timeout')) timeouts += 1;
    }
    if (attempt.status_code !== null) {
      statusCodes[attempt.status_code] = (statusCodes[attempt.status_code] ?? 0) + 1;
      if (attempt.status_code < 200 || attempt.status_code >= 300) non2xx += 1;
    }
  }
  const durations = attempts.map((attempt) => attempt.duration_ms).sort((a, b) => a - b);
  const row: RowMeasurement = {
    label: 'deliveries',
    requestsPerSecond: run.events / run.seconds,
    latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    errors,
    timeouts,
    non2xx,
    statusCodes,
  };
  const notes = [
    `a backlog of ${run.events} events written in ${run.insertSeconds.toFixed(1)} s (one transaction), all delivered ${run.seconds.toFixed(2)} s after ` +
      `its COMMIT (polled every ${DRAIN_POLL_MS} ms); ${attempts.length} attempts (${attempts.length - run.events} retries), each ` +
      `${percentile(durations, 0.5)} ms p50, ${percentile(durations, 0.99)} ms p99 (send to answer, whole ms); the receiver counted ` +
      `${received.hits} POSTs of ${received.events} distinct events`,
    `p50/p99 are from the COMMIT to each delivered_at (the start of the attempt that succeeded): the wait behind the rest of the ` +
      'backlog, not the latency of one delivery (that is the attempt time above)',
  ];
  return { row, notes };
}

/** The plan of a case whose work is the webhook worker draining backlogs written here. */
export function webhookBacklogPlan(setup: WebhookBacklogSetup): SelfMeasuredPlan {
  return {
    kind: 'self-measured',
    async probe() {
      const before = await receiverCount(setup.receiverHitsUrl);
      await backlogDrained(setup, 1);
      const after = await receiverCount(setup.receiverHitsUrl);
      if (after.hits <= before.hits)
        throw new Error('probe: the event was marked DELIVERED but the receiver counted no POST');
    },
    async measure(settings: LoadSettings): Promise<CaseMeasurement> {
      const warmupRates: number[] = [];
      let events = FIRST_WARMUP_EVENTS;
      let drainedSeconds = 0;
      while (drainedSeconds < settings.warmupSeconds || warmupRates.length < MIN_WARMUP_ROUNDS) {
        const round = await backlogDrained(setup, events);
        warmupRates.push(round.events / round.seconds);
        drainedSeconds += round.seconds;
        events = Math.max(1, Math.ceil(warmupRates.at(-1)! * WARMUP_ROUND_SECONDS));
      }
      const measuredEvents = Math.max(MIN_MEASURED_EVENTS, Math.ceil(warmupRates.at(-1)! * settings.durationSeconds));
      const before = await receiverCount(setup.receiverHitsUrl);
      const run = await backlogDrained(setup, measuredEvents);
      const after = await receiverCount(setup.receiverHitsUrl);
      const { row, notes } = await measuredRow(setup, run, {
        hits: after.hits - before.hits,
        events: after.events - before.events,
      });
      notes.push(
        `warm-up backlogs drained at ${warmupRates.map((rate) => rate.toFixed(0)).join(', ')} deliveries/s; the measured one was sized from the last`,
      );
      return { rows: [row], warmupRates, pool: null, chained: null, notes };
    },
  };
}
