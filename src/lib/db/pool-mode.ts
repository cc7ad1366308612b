/**
 * What a PostgreSQL connection is: one server session of its own (`session`), or a client of a
 * pooler that hands each transaction to any server session (`transaction`, PgBouncer's
 * `pool_mode = transaction`). The driver (postgres-database.ts) keeps no state across
 * transactions in the second. And the start-up check that a connection taken for a session is
 * one: opens two connections of its own to the database and reads which server process answers
 * each; it touches nothing else.
 */
export const DB_POOL_MODES = ['session', 'transaction'] as const;
export type DbPoolMode = (typeof DB_POOL_MODES)[number];

/**
 * Turns of the check. With PgBouncer's default (server_round_robin = 0, the last server
 * session released is the next handed out) the first turn shows the sharing; more turns catch
 * a pooler that hands sessions out in turn, or another client taking the session in between.
 */
const PROBE_TURNS = 4;
const PROBE_CONNECT_TIMEOUT_MS = 10_000;

/** Two open connections were answered by one server process: the pooler shares sessions between its clients. */
export interface SharedSession {
  /** The server process (pg_backend_pid) both connections reached. */
  readonly backendPid: number;
}

/**
 * Looks for one server session serving two connections that are open at the same time, which
 * a session of one's own never does: on a direct connection, or a pooler in session pooling,
 * each connection keeps its server process until it closes. Seeing it proves transaction (or
 * statement) pooling; not seeing it proves nothing, since a pooler may happen to hand each
 * connection a different session every turn. Each turn is one statement on each connection in
 * order, never both at once, so a pool of one server session is enough.
 */
export async function findSharedSession(connectionString: string): Promise<SharedSession | null> {
  // Imported here: the configuration imports DB_POOL_MODES, and a command without a database (`fxgate sign`) loads no driver.
  const { default: pg } = await import('pg');
  const clients = [0, 1].map(
    () => new pg.Client({ connectionString, connectionTimeoutMillis: PROBE_CONNECT_TIMEOUT_MS }),
  );
  // A connection lost while the check runs fails its statement; without a listener it would end the process.
  for (const client of clients) client.on('error', () => {});
  try {
    for (const client of clients) await client.connect();
    const seen = clients.map(() => new Set<number>());
    for (let turn = 0; turn < PROBE_TURNS; turn += 1) {
      for (const [index, client] of clients.entries()) {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        seen[index]!.add(rows[0]!.pid);
      }
      const shared = [...seen[0]!].find((pid) => seen[1]!.has(pid));
      if (shared !== undefined) return { backendPid: shared };
    }
    return null;
  } finally {
    await Promise.allSettled(clients.map((client) => client.end()));
  }
}
