/**
 * The one callback base a fleet of gateways registers its v3 webhook endpoints at. Each gateway
 * that advertises a base (FXGATE_GATEWAY_WEBHOOK_URL, `fxgate all`'s own listener) holds a lease
 * on its row of legacy_webhook_gateways, renewed at each decision and deleted when it stops. The
 * fleet's base (legacy_webhook_callback) is kept while any live gateway advertises it, and moves
 * only when none does, to the base the newest live gateways advertise. So gateways that advertise
 * different bases agree on one and never take the registrations from each other, and a rolling
 * deploy that changes the base moves them once: when the last gateway of the old base has stopped.
 *
 * Touches those two tables only. Times are the database's clock, which every gateway shares.
 */
import type { Database, Queryable } from '../../lib/db/database.js';
import { newUuid } from '../../lib/ids.js';

/** A base as v3 will be given it: no trailing slash, normalised as a URL. */
export function normaliseBase(base: string): string {
  return new URL(base.replace(/\/+$/, '')).href.replace(/\/+$/, '');
}

/** A base some live gateways advertise. */
export interface AdvertisedBase {
  readonly base: string;
  readonly gateways: number;
  /** When the earliest of them started (the database's clock). */
  readonly since: Date;
}

export interface CallbackDecision {
  /** Where every gateway registers; null while no gateway has ever advertised one. */
  readonly base: string | null;
  /** This gateway's own base, normalised; null when it advertises none. */
  readonly own: string | null;
  /** The fleet's base before this decision, when this decision moved it; else null. */
  readonly movedFrom: string | null;
  /** Every base live gateways advertise, the newest first (this one's included). */
  readonly advertised: readonly AdvertisedBase[];
}

export interface FleetCallbackOptions {
  readonly db: Database;
  /** This gateway's base; null: it advertises none, and follows the fleet's. */
  readonly base: string | null;
  /** How long a renewal holds: past it without another, the gateway is taken for gone. */
  readonly leaseMs: number;
}

/** The fleet's base as last decided, for a process that advertises none (`fxgate webhooks add`). */
export async function fleetCallbackBase(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ base_url: string | null }>('SELECT base_url FROM legacy_webhook_callback');
  return rows[0]?.base_url ?? null;
}

export class FleetCallback {
  /** This process's row; a new one per process, so a restart is a new gateway. */
  readonly instanceId = newUuid();
  readonly own: string | null;

  constructor(private readonly options: FleetCallbackOptions) {
    this.own = options.base === null ? null : normaliseBase(options.base);
  }

  /**
   * Renews this gateway's lease and decides the fleet's base, in one transaction that holds the
   * decision's row, so that two gateways deciding at once decide one after the other.
   */
  decide(): Promise<CallbackDecision> {
    return this.options.db.transaction(async (tx) => {
      const { rows: held } = await tx.query<{ base_url: string | null }>(
        'SELECT base_url FROM legacy_webhook_callback FOR UPDATE',
      );
      const current = held[0]?.base_url ?? null;
      if (this.own !== null) {
        await tx.query(
          `INSERT INTO legacy_webhook_gateways (instance_id, base_url, started_at, renewed_at, expires_at)
           VALUES ($1, $2, now(), now(), now() + $3::double precision * interval '1 millisecond')
           ON CONFLICT (instance_id) DO UPDATE SET renewed_at = EXCLUDED.renewed_at, expires_at = EXCLUDED.expires_at`,
          [this.instanceId, this.own, this.options.leaseMs],
        );
      }
      await tx.query('DELETE FROM legacy_webhook_gateways WHERE expires_at <= now()');
      const { rows } = await tx.query<{ base_url: string; gateways: number; since: Date }>(
        `SELECT base_url, count(*)::int AS gateways, min(started_at) AS since FROM legacy_webhook_gateways
          GROUP BY base_url ORDER BY min(start_order) DESC`,
      );
      const advertised = rows.map((row) => ({ base: row.base_url, gateways: row.gateways, since: row.since }));
      // Kept while anyone advertises it; with nobody advertising anything, nothing is decided.
      if (advertised.length === 0 || advertised.some((entry) => entry.base === current))
        return { base: current, own: this.own, movedFrom: null, advertised };
      const chosen = advertised[0]!.base;
      await tx.query('UPDATE legacy_webhook_callback SET base_url = $1, decided_at = now()', [chosen]);
      return { base: chosen, own: this.own, movedFrom: current, advertised };
    });
  }

  /** Gives up this gateway's lease at once (it stops): the fleet need not wait for it to expire. */
  async withdraw(): Promise<void> {
    await this.options.db.query('DELETE FROM legacy_webhook_gateways WHERE instance_id = $1', [this.instanceId]);
  }

  /**
   * Forgets every other gateway's lease: for a database only this process can open (PGlite),
   * where any other row is a process that died without withdrawing.
   */
  async forgetOthers(): Promise<void> {
    await this.options.db.query('DELETE FROM legacy_webhook_gateways WHERE instance_id <> $1', [this.instanceId]);
  }
}
