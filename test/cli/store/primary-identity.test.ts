import { describe, expect, it } from 'vitest';

import { primaryIdentity } from '../../../src/cli/store/primary-identity.js';
import { StoreUnavailableError } from '../../../src/lib/errors/internal-errors.js';

const RUN_ID = 'f0b5a4c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7';
const REPL_ID = '5d1c3a2b4e6f708192a3b4c5d6e7f8091a2b3c4d';

const server = `# Server\r\nredis_version:7.0.15\r\nrun_id:${RUN_ID}\r\ntcp_port:6379\r\n`;
const primary = `# Replication\r\nrole:master\r\nconnected_slaves:1\r\nmaster_failover_state:no-failover\r\nmaster_replid:${REPL_ID}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n`;

describe('primaryIdentity', () => {
  it('is the run_id and the master_replid of a primary', () => {
    expect(primaryIdentity(server, primary)).toBe(`${RUN_ID}:${REPL_ID}`);
  });

  it('changes with either: a restart (run_id) or a promotion (master_replid)', () => {
    const restarted = server.replace(RUN_ID, RUN_ID.replace('f0', '0f'));
    const promoted = primary.replace(`master_replid:${REPL_ID}`, `master_replid:${REPL_ID.replace('5d', 'd5')}`);
    const identities = new Set([
      primaryIdentity(server, primary),
      primaryIdentity(restarted, primary),
      primaryIdentity(server, promoted),
    ]);
    expect(identities.size).toBe(3);
  });

  it('refuses a replica as unavailable: every write there would be READONLY', () => {
    const replica = `# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nmaster_link_status:up\r\nmaster_replid:${REPL_ID}\r\n`;
    expect(() => primaryIdentity(server, replica)).toThrow(StoreUnavailableError);
    expect(() => primaryIdentity(server, replica)).toThrow(/as a slave, not a primary/);
  });

  it('refuses INFO without the fields, as unavailable rather than with a guess', () => {
    expect(() => primaryIdentity('# Server\r\nredis_version:7.0.15\r\n', primary)).toThrow(StoreUnavailableError);
    expect(() => primaryIdentity(server, '# Replication\r\nrole:master\r\n')).toThrow(/run_id or master_replid/);
  });
});
