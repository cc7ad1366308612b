import { StoreUnavailableError } from '../../lib/errors/internal-errors.js';
/**
 * The identity of the Redis primary a connection reached, read from INFO: its `run_id`, which
 * changes at every start of the server, and its `master_replid`, which changes when a replica is
 * promoted (and when a primary starts afresh). The epoch marker is recorded with the identity of
 * the primary that made or confirmed it (redis-scripts.ts nonceEpochOfPrimary): a connection that
 * finds another identity is on a server that may lack nonces the marker's server held.
 *
 * It may touch: the INFO text it is given; no command is sent here.
 */

/** The INFO fields the identity is made of, one `name:value` a line. */
function infoFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  return fields;
}

/**
 * `<run_id>:<master_replid>` of a primary, from the text of `INFO server` and `INFO replication`.
 * A replica is refused: the store writes, and a replica would answer READONLY to every write.
 */
export function primaryIdentity(serverInfo: string, replicationInfo: string): string {
  const server = infoFields(serverInfo);
  const replication = infoFields(replicationInfo);
  const role = replication.get('role');
  if (role !== 'master') {
    throw new StoreUnavailableError(`Redis answered as a ${role ?? 'server of unknown role'}, not a primary`);
  }
  const runId = server.get('run_id');
  const replId = replication.get('master_replid');
  if (runId === undefined || runId === '' || replId === undefined || replId === '') {
    throw new StoreUnavailableError('Redis INFO gave no run_id or master_replid (Redis 5 or later is required)');
  }
  return `${runId}:${replId}`;
}
