/**
 * The gateway's own v3 webhook endpoints: one per org and mode that has a legacy subscription,
 * at `<callback base>/<orgId>/<mode>`, created with the gateway's v3 credential for that org and
 * mode (`POST /v3/fx/webhook-endpoints`), its secret kept sealed, and deleted when the last
 * subscription of the org and mode goes.
 *
 * Idempotent across processes: a registration row is written first with the Idempotency-Key its
 * POST will carry (one REGISTERING or ACTIVE row per org and mode, a unique index), so every
 * process that finishes it gets the same endpoint back from v3. After a registration, other v3
 * endpoints of the book at the same URL that no row knows (left by a crash after v3 created one,
 * once v3 had forgotten the key) are deleted.
 *
 * A changed callback base loses no delivery. v3 gives up the pending deliveries of an endpoint
 * it deletes, and fans each event out to the endpoints active when it happens; so the new
 * endpoint is registered first, and the old one is kept (RETIRING, its signature still accepted
 * by the receiver) until v3's retry window has passed since then: every event before the switch
 * has been delivered through it or given up by v3 by that time, and every event after it also
 * reaches the new endpoint. Only then is it deleted. A base that comes back before then finds
 * its endpoint still there and makes it active again. Any conforming v3 works: nothing here
 * needs to see v3's outbox.
 */
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { isUniqueViolation } from '../../lib/db/constraint-errors.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import { RegistrationError } from '../../lib/errors/internal-errors.js';
import { newUuid } from '../../lib/ids.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { V3_WEBHOOK_RETRY_WINDOW_MS } from '../legacy/v3-contract/operations.js';
import type { V3CallResponse, V3Client } from '../upstream/v3-client.js';
import { subscribedBooks } from './subscriptions.js';

/** The receiver's path on the gateway's listener, followed by `/<orgId>/<mode>`. */
export const LEGACY_WEBHOOK_PATH = '/_fxgate/webhooks/v3';
const ENDPOINTS = '/v3/fx/webhook-endpoints';
/** How long a registration waits for another process's, with the same key, to finish at v3. */
const IN_FLIGHT_RETRIES = 5;
const IN_FLIGHT_WAIT_MS = 500;

export const REGISTRAR_DEFAULTS = {
  /**
   * How long a replaced endpoint is kept once its successor is active: v3's retry window, and an
   * hour for its last attempt (made at the window's end) to finish and be recorded.
   */
  retireAfterMs: V3_WEBHOOK_RETRY_WINDOW_MS + 60 * 60 * 1000,
} as const;

/** The URL v3 delivers an org and mode's events to. */
export function registrationUrl(base: string, orgId: string, mode: Mode): string {
  // Normalised as v3 stores it, so the URL v3 lists compares equal to the one registered.
  return new URL(`${base.replace(/\/+$/, '')}/${orgId}/${mode}`).href;
}

/** The sealed v3 secret is bound to its registration row. */
export function registrationSecretBinding(id: string): string {
  return `legacy-webhook-registration:${id}`;
}

interface RegistrationRow {
  readonly id: string;
  readonly org_id: string;
  readonly mode: Mode;
  readonly url: string;
  readonly status: 'REGISTERING' | 'ACTIVE' | 'RETIRING' | 'REMOVING';
  readonly idempotency_key: string;
  readonly endpoint_id: string | null;
  readonly secret: string | null;
}

const COLUMNS = 'id, org_id, mode, url, status, idempotency_key, endpoint_id, secret';
/** The unique index that allows one REGISTERING or ACTIVE row per org and mode. */
const ONE_PER_BOOK = 'legacy_webhook_registrations_book_idx';

export interface Registration {
  readonly orgId: string;
  readonly mode: Mode;
  readonly endpointId: string;
  readonly url: string;
}

export interface ReconcileReport {
  readonly registered: Registration[];
  /** v3 endpoint ids deleted: of books no subscription needs, and replaced ones past their retirement. */
  readonly removed: string[];
  /** Orgs and modes a subscription needs registered, left so for want of a callback base. */
  readonly unregistered: number;
  readonly failed: RegistrationError[];
}

export interface RegistrarDependencies {
  readonly db: Database;
  readonly client: V3Client;
  readonly keyring: SealingKeyring;
  /** The v3 event types each endpoint subscribes to. */
  readonly v3EventTypes: readonly string[];
  /** How long a replaced endpoint is kept once its successor is active (REGISTRAR_DEFAULTS). */
  readonly retireAfterMs?: number;
  readonly now?: () => Date;
}

export class WebhookRegistrar {
  private readonly now: () => Date;
  private readonly retireAfterMs: number;
  /** One piece of work per org and mode at a time in this process. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: RegistrarDependencies) {
    this.now = deps.now ?? (() => new Date());
    this.retireAfterMs = deps.retireAfterMs ?? REGISTRAR_DEFAULTS.retireAfterMs;
  }

  /**
   * The v3 endpoint of the org and mode at `base`, registered unless it is; idempotent. One at
   * another URL is replaced (kept until it has drained), and retired ones past their time deleted.
   */
  async ensure(orgId: string, mode: Mode, base: string): Promise<Registration> {
    return (await this.serially(orgId, mode, () => this.ensureNow(orgId, mode, base))).registration;
  }

  /** Deletes the org and mode's v3 endpoints when no active subscription needs them; the ids deleted. */
  releaseIfUnused(orgId: string, mode: Mode): Promise<string[]> {
    return this.serially(orgId, mode, () => this.releaseNow(orgId, mode));
  }

  /**
   * Every org and mode: registered at `base` when a subscription needs it (nothing is registered
   * without a base), released when none does. A failure of one is reported, not thrown.
   */
  async reconcile(base: string | null): Promise<ReconcileReport> {
    const report = {
      registered: [] as Registration[],
      removed: [] as string[],
      unregistered: 0,
      failed: [] as RegistrationError[],
    };
    const subscribed = await subscribedBooks(this.deps.db);
    const { rows } = await this.deps.db.query<{ org_id: string; mode: Mode }>(
      'SELECT DISTINCT org_id, mode FROM legacy_webhook_registrations',
    );
    const books = new Map<string, { orgId: string; mode: Mode; subscribed: boolean }>();
    for (const row of rows)
      books.set(`${row.org_id}.${row.mode}`, { orgId: row.org_id, mode: row.mode, subscribed: false });
    for (const book of subscribed) books.set(`${book.orgId}.${book.mode}`, { ...book, subscribed: true });
    for (const book of books.values()) {
      try {
        if (!book.subscribed) report.removed.push(...(await this.releaseIfUnused(book.orgId, book.mode)));
        else if (base !== null) {
          const ensured = await this.serially(book.orgId, book.mode, () => this.ensureNow(book.orgId, book.mode, base));
          report.registered.push(ensured.registration);
          report.removed.push(...ensured.removed);
        } else report.unregistered += 1;
      } catch (error) {
        report.failed.push(
          error instanceof RegistrationError
            ? error
            : new RegistrationError(
                book.orgId,
                book.mode,
                `org ${book.orgId} (${book.mode}): ${error instanceof Error ? error.message : String(error)}`,
                { cause: error },
              ),
        );
      }
    }
    return report;
  }

  private serially<T>(orgId: string, mode: Mode, work: () => Promise<T>): Promise<T> {
    const key = `${orgId}.${mode}`;
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.queues.set(key, settled);
    void settled.then(() => {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    });
    return next;
  }

  private async current(db: Queryable, orgId: string, mode: Mode): Promise<RegistrationRow | null> {
    const { rows } = await db.query<RegistrationRow>(
      `SELECT ${COLUMNS} FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND status IN ('REGISTERING', 'ACTIVE')`,
      [orgId, mode],
    );
    return rows[0] ?? null;
  }

  /** The registration, and the ids of the retired endpoints it deleted. */
  private async ensureNow(
    orgId: string,
    mode: Mode,
    base: string,
  ): Promise<{ registration: Registration; removed: string[] }> {
    const url = registrationUrl(base, orgId, mode);
    const { db } = this.deps;
    let row = await this.current(db, orgId, mode);
    // Finished wherever it points: v3 may have made it, and only the replay says so (and with what secret).
    if (row?.status === 'REGISTERING') row = await this.finishRegistration(row, url);
    if (row !== null && row.url !== url) {
      // The fleet's URL changed: the old endpoint keeps delivering until the new one is active and it has drained.
      await db.query(
        `UPDATE legacy_webhook_registrations SET status = 'RETIRING', retire_after = NULL, updated_at = $2 WHERE id = $1 AND status = 'ACTIVE'`,
        [row.id, this.now()],
      );
      row = null;
    }
    row ??= (await this.revive(orgId, mode, url)) ?? (await this.register(orgId, mode, url));
    // From here on every event reaches the active endpoint too: the retiring ones' wait starts now.
    await db.query(
      `UPDATE legacy_webhook_registrations SET retire_after = $3
        WHERE org_id = $1 AND mode = $2 AND status = 'RETIRING' AND retire_after IS NULL`,
      [orgId, mode, new Date(this.now().getTime() + this.retireAfterMs)],
    );
    await db.query(
      `UPDATE legacy_webhook_registrations SET status = 'REMOVING', updated_at = $3
        WHERE org_id = $1 AND mode = $2 AND status = 'RETIRING' AND retire_after <= $3`,
      [orgId, mode, this.now()],
    );
    const removed = await this.finishRemovals(orgId, mode);
    return { registration: { orgId, mode, endpointId: row.endpoint_id!, url: row.url }, removed };
  }

  /** A retiring endpoint at `url` made active again (its base came back before it was deleted); null when there is none. */
  private async revive(orgId: string, mode: Mode, url: string): Promise<RegistrationRow | null> {
    try {
      const { rows } = await this.deps.db.query<RegistrationRow>(
        `UPDATE legacy_webhook_registrations SET status = 'ACTIVE', retire_after = NULL, updated_at = $4
          WHERE id = (SELECT id FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND url = $3 AND status = 'RETIRING'
                       ORDER BY created_at DESC LIMIT 1)
            AND status = 'RETIRING'
        RETURNING ${COLUMNS}`,
        [orgId, mode, url, this.now()],
      );
      return rows[0] ?? null;
    } catch (error) {
      // Another process registered the book meanwhile: its registration is the one to use.
      if (isUniqueViolation(error, ONE_PER_BOOK)) return null;
      throw error;
    }
  }

  /** A new registration at `url`, or the one another process is making at the same time; ACTIVE. */
  private async register(orgId: string, mode: Mode, url: string): Promise<RegistrationRow> {
    const { db } = this.deps;
    const id = newUuid();
    await db.query(
      `INSERT INTO legacy_webhook_registrations (id, org_id, mode, url, status, idempotency_key, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'REGISTERING', $5, $6, $6)
       ON CONFLICT (org_id, mode) WHERE status IN ('REGISTERING', 'ACTIVE') DO NOTHING`,
      [id, orgId, mode, url, `fxgwwh.${id}`, this.now()],
    );
    const row = await this.current(db, orgId, mode);
    const registered = row?.status === 'REGISTERING' ? await this.finishRegistration(row, row.url) : row;
    if (registered === null || registered === undefined)
      throw new RegistrationError(
        orgId,
        mode,
        `org ${orgId} (${mode}): its registration was removed while it was being made`,
      );
    return registered;
  }

  /**
   * Creates the row's endpoint at v3 (or learns it from the replay of its key) and makes the row
   * ACTIVE. A row for a URL no longer wanted that v3 refused is dropped (v3 made nothing): null.
   */
  private async finishRegistration(row: RegistrationRow, wanted: string): Promise<RegistrationRow | null> {
    const { db } = this.deps;
    let created;
    try {
      created = await this.create(row);
    } catch (error) {
      if (row.url !== wanted && error instanceof RegistrationError && error.v3Code === 'WEBHOOK_URL_INVALID') {
        await db.query(`DELETE FROM legacy_webhook_registrations WHERE id = $1 AND status = 'REGISTERING'`, [row.id]);
        return null;
      }
      throw error;
    }
    await db.query(
      `UPDATE legacy_webhook_registrations SET status = 'ACTIVE', endpoint_id = $2, secret = $3, updated_at = $4 WHERE id = $1 AND status = 'REGISTERING'`,
      [row.id, created.id, this.deps.keyring.seal(created.secret, registrationSecretBinding(row.id)), this.now()],
    );
    await this.deleteStrays(row, created.id);
    return { ...row, status: 'ACTIVE', endpoint_id: created.id };
  }

  private async releaseNow(orgId: string, mode: Mode): Promise<string[]> {
    const { db } = this.deps;
    await db.query(
      `UPDATE legacy_webhook_registrations r SET status = 'REMOVING', updated_at = $3
        WHERE r.org_id = $1 AND r.mode = $2 AND r.status IN ('REGISTERING', 'ACTIVE', 'RETIRING')
          AND NOT EXISTS (SELECT 1 FROM legacy_webhook_subscriptions s WHERE s.org_id = r.org_id AND s.mode = r.mode AND s.status = 'ACTIVE')`,
      [orgId, mode, this.now()],
    );
    return this.finishRemovals(orgId, mode);
  }

  /** Deletes the v3 endpoint of every REMOVING row of the org and mode, then the row. */
  private async finishRemovals(orgId: string, mode: Mode): Promise<string[]> {
    const { db } = this.deps;
    const { rows } = await db.query<RegistrationRow>(
      `SELECT ${COLUMNS} FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND status = 'REMOVING'`,
      [orgId, mode],
    );
    const removed: string[] = [];
    for (const row of rows) {
      // A registration that never learnt its endpoint asks v3 again with its key: the replay names it.
      const endpointId = row.endpoint_id ?? (await this.replayedEndpointId(row));
      if (endpointId !== null) await this.deleteEndpoint(row, endpointId);
      await db.query(`DELETE FROM legacy_webhook_registrations WHERE id = $1 AND status = 'REMOVING'`, [row.id]);
      if (endpointId !== null) removed.push(endpointId);
    }
    return removed;
  }

  /** The endpoint v3 made for the row's key; null when v3 refused its URL, and so made none. */
  private async replayedEndpointId(row: RegistrationRow): Promise<string | null> {
    try {
      return (await this.create(row)).id;
    } catch (error) {
      if (error instanceof RegistrationError && error.v3Code === 'WEBHOOK_URL_INVALID') return null;
      throw error;
    }
  }

  private fail(row: Pick<RegistrationRow, 'org_id' | 'mode'>, what: string, response: V3CallResponse): never {
    const error = response.error!;
    const hint =
      error.code === 'AUTH_INSUFFICIENT_SCOPE'
        ? `: the gateway's v3 credential for org ${row.org_id} (${row.mode}) lacks the webhooks scope; give it view,trade,withdraw,webhooks`
        : error.code === 'WEBHOOK_URL_INVALID'
          ? `: ${JSON.stringify(error.details)} (FXGATE_GATEWAY_WEBHOOK_URL)`
          : '';
    throw new RegistrationError(
      row.org_id,
      row.mode,
      `org ${row.org_id} (${row.mode}): v3 refused ${what} with ${response.status} ${error.code}${hint}`,
      { v3Code: error.code },
    );
  }

  private async call(
    row: Pick<RegistrationRow, 'org_id' | 'mode'>,
    request: Omit<Parameters<V3Client['request']>[0], 'orgId' | 'mode'>,
  ): Promise<V3CallResponse> {
    try {
      return await this.deps.client.request({ orgId: row.org_id, mode: row.mode, ...request });
    } catch (error) {
      throw new RegistrationError(
        row.org_id,
        row.mode,
        `org ${row.org_id} (${row.mode}): ${request.method} ${request.pathAndQuery} failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  private async create(row: RegistrationRow): Promise<{ id: string; secret: string }> {
    const body = Buffer.from(JSON.stringify({ url: row.url, eventTypes: this.deps.v3EventTypes }));
    let response = await this.call(row, {
      method: 'POST',
      pathAndQuery: ENDPOINTS,
      body,
      idempotencyKey: row.idempotency_key,
    });
    // Another process is making this very registration (same key): its answer is ours once v3 has it.
    for (let waited = 0; response.error?.code === 'IDEMPOTENCY_IN_FLIGHT' && waited < IN_FLIGHT_RETRIES; waited += 1) {
      await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_WAIT_MS));
      response = await this.call(row, {
        method: 'POST',
        pathAndQuery: ENDPOINTS,
        body,
        idempotencyKey: row.idempotency_key,
      });
    }
    if (response.error) this.fail(row, 'the webhook endpoint', response);
    const data = (JSON.parse(response.body.toString('utf8')) as { data?: { id?: unknown; secret?: unknown } }).data;
    if (typeof data?.id !== 'string' || typeof data.secret !== 'string') {
      throw new RegistrationError(
        row.org_id,
        row.mode,
        `org ${row.org_id} (${row.mode}): v3 created a webhook endpoint without an id and a secret`,
      );
    }
    return { id: data.id, secret: data.secret };
  }

  private async deleteEndpoint(row: Pick<RegistrationRow, 'org_id' | 'mode'>, endpointId: string): Promise<void> {
    const response = await this.call(row, {
      method: 'DELETE',
      pathAndQuery: `${ENDPOINTS}/${encodeURIComponent(endpointId)}`,
    });
    // Already gone is what was wanted.
    if (response.error && response.error.code !== 'WEBHOOK_ENDPOINT_NOT_FOUND')
      this.fail(row, `deleting ${endpointId}`, response);
  }

  /** Endpoints of the book at this registration's URL that no registration knows: a crashed registration's leftovers. */
  private async deleteStrays(row: RegistrationRow, keep: string): Promise<void> {
    const response = await this.call(row, { method: 'GET', pathAndQuery: ENDPOINTS });
    if (response.error) this.fail(row, 'listing the webhook endpoints', response);
    const endpoints =
      (JSON.parse(response.body.toString('utf8')) as { data?: { id?: unknown; url?: unknown }[] }).data ?? [];
    // A retiring endpoint at the same URL (its base went and came back) still has deliveries to make.
    const { rows } = await this.deps.db.query<{ endpoint_id: string }>(
      'SELECT endpoint_id FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND endpoint_id IS NOT NULL',
      [row.org_id, row.mode],
    );
    const known = new Set([keep, ...rows.map((known) => known.endpoint_id)]);
    for (const endpoint of endpoints) {
      if (typeof endpoint.id === 'string' && !known.has(endpoint.id) && endpoint.url === row.url)
        await this.deleteEndpoint(row, endpoint.id);
    }
  }
}
