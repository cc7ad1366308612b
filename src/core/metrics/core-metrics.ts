/**
 * The core's Prometheus metrics (`fxgate_core_...`), served on the admin listener's GET
 * /metrics: requests by declared operation and status class, trades and withdrawal status
 * changes as they commit, and two values read when scraped: the v3 webhook outbox's backlog and
 * the ledger check. Label values are bounded (operations as declared, status classes, the
 * statuses); no org, key, id or address is ever one.
 *
 * Trades and withdrawals are counted by the code that commits them (trading/, money-movement/),
 * after the commit: a rolled-back transaction counts nothing.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Counter, Gauge, Registry } from 'prom-client';

import type { Database } from '../../lib/db/database.js';
import {
  AnswerFamilies,
  answerHook,
  type AnswerSeries,
  appendOnResponse,
  childrenByValue,
  gaugeReadOnScrape,
  type MetricsRouteConfig,
  observeAnswer,
} from '../../lib/metrics/series.js';
import type { OperationMeta } from '../http/operation.js';
import type { WithdrawalStatus } from '../money-movement/withdrawal-status.js';
import { LedgerBalanceCheck, type LedgerBalanceCheckOptions } from './ledger-balance-check.js';

export const CORE_METRICS_PREFIX = 'fxgate_core_';

export const TRADE_EVENTS = ['executed', 'reversed', 'settled'] as const;
export type TradeEvent = (typeof TRADE_EVENTS)[number];

/** What the trading and settlement code reports once its transaction has committed. */
export interface CoreEvents {
  trade(event: TradeEvent): void;
  /** `from` null: the withdrawal was created (as PENDING). */
  withdrawalMoved(from: WithdrawalStatus | null, to: WithdrawalStatus): void;
}

export const UNKNOWN_OPERATION = 'unknown';

/** A withdrawal's status changes as labels: from `none` when it is created. */
const WITHDRAWAL_MOVES: readonly (readonly [WithdrawalStatus | null, WithdrawalStatus])[] = [
  [null, 'PENDING'],
  ['PENDING', 'PROCESSING'],
  ['PENDING', 'CANCELLED'],
  ['PENDING', 'FAILED'],
  ['PROCESSING', 'COMPLETED'],
  ['PROCESSING', 'FAILED'],
];

const moveKey = (from: WithdrawalStatus | null, to: WithdrawalStatus): string => `${from ?? 'none'}>${to}`;

export interface CoreMetricsOptions {
  readonly db: Database;
  readonly ledgerCheck?: Partial<LedgerBalanceCheckOptions>;
}

export class CoreMetrics implements CoreEvents {
  readonly registry = new Registry();
  private readonly answers: AnswerFamilies;
  private readonly trades: Readonly<Record<TradeEvent, { inc(): void }>>;
  private readonly withdrawalMoves = new Map<string, { inc(): void }>();
  private readonly withdrawals: Counter<string>;
  private readonly series = new Map<string, AnswerSeries>();
  readonly ledger: LedgerBalanceCheck;

  constructor(options: CoreMetricsOptions) {
    const registers = [this.registry];
    this.answers = new AnswerFamilies({
      registry: this.registry,
      prefix: 'fxgate_core_',
      labelNames: ['operation'],
      requestsHelp: 'Requests answered, by operation and status class.',
    });
    const trades = new Counter({
      name: 'fxgate_core_trades_total',
      help: 'Trades executed, reversed and settled (committed).',
      labelNames: ['event'],
      registers,
    });
    this.trades = childrenByValue(trades, [], TRADE_EVENTS);
    this.withdrawals = new Counter({
      name: 'fxgate_core_withdrawal_transitions_total',
      help: 'Withdrawal status changes (committed); from "none" is a withdrawal created.',
      labelNames: ['from', 'to'],
      registers,
    });
    for (const [from, to] of WITHDRAWAL_MOVES)
      this.withdrawalMoves.set(
        moveKey(from, to),
        this.withdrawals.labels((from ?? 'none').toLowerCase(), to.toLowerCase()),
      );
    gaugeReadOnScrape({
      name: 'fxgate_core_webhook_backlog',
      help: 'v3 webhook deliveries waiting in the outbox (pending), read when scraped; NaN when the database did not answer within 1 s.',
      registry: this.registry,
      read: async () =>
        Number(
          (
            await options.db.query<{ n: string }>(
              `SELECT count(*)::text AS n FROM webhook_deliveries WHERE status = 'PENDING'`,
            )
          ).rows[0]!.n,
        ),
    });
    this.ledger = new LedgerBalanceCheck(options.db, options.ledgerCheck);
    const ledger = this.ledger;
    // Both read the same check: within its interval, current() answers from the one result.
    new Gauge({
      name: 'fxgate_core_ledger_balanced',
      help: "1 when every currency's ledger entries summed to zero at the last check, 0 when one did not; NaN before the first check completes. Checked when scraped, at most once a minute.",
      registers,
      async collect() {
        const result = await ledger.current();
        this.set(result === null ? Number.NaN : result.balanced ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fxgate_core_ledger_check_timestamp_seconds',
      help: 'When the ledger check last completed (Unix time); NaN before the first.',
      registers,
      async collect() {
        const result = await ledger.current();
        this.set(result === null ? Number.NaN : result.checkedAt / 1000);
      },
    });
  }

  trade(event: TradeEvent): void {
    this.trades[event].inc();
  }

  withdrawalMoved(from: WithdrawalStatus | null, to: WithdrawalStatus): void {
    let child = this.withdrawalMoves.get(moveKey(from, to));
    if (child === undefined) {
      // Not a legal move (applyTransition refuses those); counted all the same rather than lost.
      child = this.withdrawals.labels((from ?? 'none').toLowerCase(), to.toLowerCase());
      this.withdrawalMoves.set(moveKey(from, to), child);
    }
    child.inc();
  }

  /** An operation's series (`METHOD /path`, a route pattern, or unknown), made once. */
  private of(operation: string): AnswerSeries {
    let series = this.series.get(operation);
    if (series === undefined) {
      series = this.answers.seriesFor([operation]);
      this.series.set(operation, series);
    }
    return series;
  }

  /**
   * Counts every answer of the app: each route gets an onResponse hook holding its series (a
   * declared operation by its method and path, a 405 route as unknown, a route naming its own
   * operation by that name, any other route by its pattern), and a request no route took is
   * counted as unknown. Call before any route is added.
   */
  instrument(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => this.instrumentRoute(route));
    const unrouted = this.of(UNKNOWN_OPERATION);
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) observeAnswer(unrouted, reply);
      done();
    });
  }

  private instrumentRoute(route: RouteOptions): void {
    const config = route.config as
      (MetricsRouteConfig & { v3Operation?: OperationMeta; methodNotAllowed?: unknown }) | undefined;
    const declared = config?.v3Operation;
    const series = this.of(
      declared !== undefined
        ? `${declared.method} ${declared.path}`
        : config?.methodNotAllowed !== undefined
          ? UNKNOWN_OPERATION
          : (config?.metricsOperation ?? route.url),
    );
    appendOnResponse(route, answerHook(series));
  }
}
