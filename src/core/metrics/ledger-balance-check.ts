/**
 * The ledger's first invariant as a metric: every currency's entries sum to zero (each ledger
 * transaction balances per currency, so the whole journal does too). The check scans
 * ledger_entries, so it runs only when scraped and at most once per `intervalMs`; a scrape in
 * between is answered from the last result. A scrape waits at most `scrapeWaitMs` for a check it
 * started, and the check is cut by a statement timeout on PostgreSQL (PGlite has none: the
 * interval is its only bound). A check that fails or is cut leaves the last result standing;
 * its timestamp says how old it is.
 */
import type { Database } from '../../lib/db/database.js';
import { readWithin } from '../../lib/metrics/series.js';

export interface LedgerBalanceCheckOptions {
  /** Checks start at most this often. */
  readonly intervalMs: number;
  /** The longest a scrape waits for a check it started. */
  readonly scrapeWaitMs: number;
  /** PostgreSQL's statement_timeout for the check. */
  readonly statementTimeoutMs: number;
  readonly now: () => number;
}

export const LEDGER_BALANCE_CHECK_DEFAULTS: LedgerBalanceCheckOptions = {
  intervalMs: 60_000,
  scrapeWaitMs: 1_000,
  statementTimeoutMs: 5_000,
  now: Date.now,
};

export interface LedgerBalanceResult {
  readonly balanced: boolean;
  /** When the check completed (ms since the epoch). */
  readonly checkedAt: number;
}

export class LedgerBalanceCheck {
  private readonly options: LedgerBalanceCheckOptions;
  private last: LedgerBalanceResult | null = null;
  private running: Promise<void> | null = null;
  private startedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    options: Partial<LedgerBalanceCheckOptions> = {},
  ) {
    this.options = { ...LEDGER_BALANCE_CHECK_DEFAULTS, ...options };
  }

  /** The latest result, after starting a check when the last one is older than the interval; null before any completed. */
  async current(): Promise<LedgerBalanceResult | null> {
    const now = this.options.now();
    if (this.running === null && now - this.startedAt >= this.options.intervalMs) {
      this.startedAt = now;
      this.running = this.run().finally(() => {
        this.running = null;
      });
    }
    const running = this.running;
    if (running !== null) await readWithin(() => running, this.options.scrapeWaitMs);
    return this.last;
  }

  private async run(): Promise<void> {
    try {
      const unbalanced = await this.db.transaction(async (tx) => {
        await tx.query(`SET LOCAL statement_timeout = ${Math.trunc(this.options.statementTimeoutMs)}`);
        const { rows } = await tx.query(
          'SELECT currency FROM ledger_entries GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1',
        );
        return rows.length > 0;
      });
      this.last = { balanced: !unbalanced, checkedAt: this.options.now() };
    } catch {
      // Cut by the timeout or the database away: the last result stands, and its timestamp ages.
    }
  }
}
