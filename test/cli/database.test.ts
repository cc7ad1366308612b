/**
 * The embedded data folder as the CLI opens it: its owner's only, whatever the umask, from the
 * first start on and for everything written there later (the database's files, the key files,
 * the sandbox record, the secrets key, the gateway's keys); and a folder found open to others,
 * as an earlier version left it, tightened at start with one line on stderr saying so.
 *
 * PostgreSQL through a real PgBouncer (Debian's 1.18, installed when missing): in session mode,
 * transaction pooling is refused with a message naming FXGATE_DB_POOL_MODE, session pooling is
 * not; transaction mode runs, warns when lone statements would have no timeout, and two cores
 * started at once migrate an empty database once.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PGLITE_FOLDER } from '../../src/cli/database.js';
import { listMigrations } from '../../src/cli/db/migrate.js';
import { EMBEDDED_KEY_FILE } from '../../src/cli/sealing.js';
import { generateSealingKey } from '../../src/lib/secrets/sealing-keys.js';
import { TEMPLATE_ENV } from '../support/database-templates.js';
import { entryCount, sharedEntries, withUmask } from '../support/file-modes.js';
import { testServices } from '../support/services.js';
import { testRedisEnv } from '../support/test-run.js';
import { startThrowawayPgBouncer, type ThrowawayPgBouncer } from '../support/throwaway-pgbouncer.js';
import { killAllCliProcesses, startCli } from './cli-process.js';
import { fxgate, startFxgate, stopInProcessServers } from './in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

describe.skipIf(process.platform === 'win32')('the embedded data folder', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fxgate-data-modes-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it(
    "is made and kept its owner's only under umask 0022: the first start, keys, webhooks, more rows",
    { timeout: 120_000 },
    async () => {
      const dataDir = join(parent, 'fresh');
      const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
      await withUmask(0o022, async () => {
        const server = await startFxgate(['all'], env);
        // Through the running server's admin listener: a subscription (sealed with the secrets key).
        const added = await fxgate(
          ['webhooks', 'add', '--org', ORG, '--mode', 'sandbox', '--url', 'http://127.0.0.1:9/hook'],
          env,
        );
        expect(added.code, added.stderr).toBe(0);
        expect(await server.stop()).toMatchObject({ code: 0 });
        const files = await entryCount(dataDir);
        // Directly on the folder: key files, and enough new keys and orgs for the database to grow.
        for (let index = 0; index < 5; index++) {
          const created = await fxgate(
            ['keys', 'create', '--org', `${ORG.slice(0, -1)}${index}`, '--mode', 'live', '--scopes', 'view'],
            env,
          );
          expect(created.code, created.stderr).toBe(0);
        }
        const again = await startFxgate(['all'], env);
        expect(again.stderr).toBe('');
        expect(await again.stop()).toMatchObject({ code: 0 });
        expect(await entryCount(dataDir)).toBeGreaterThan(files);
      });
      expect((await readdir(dataDir)).sort()).toEqual(
        expect.arrayContaining(['gateway-keys', 'keys', PGLITE_FOLDER, 'sandbox.json', EMBEDDED_KEY_FILE]),
      );
      expect(await sharedEntries(dataDir)).toEqual([]);
    },
  );

  it(
    'found open to others (0777, files 0666), is tightened at start, and the start says so on stderr',
    { timeout: 120_000 },
    async () => {
      const dataDir = join(parent, 'wide');
      const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
      const first = await startFxgate(['all'], env);
      await first.stop();
      // As an earlier version left it: every folder 0777, every file 0666.
      await mkdir(join(dataDir, 'extra'), { recursive: true });
      await writeFile(join(dataDir, 'extra', 'note'), 'x');
      const entries = [dataDir, ...(await readdir(dataDir, { recursive: true })).map((entry) => join(dataDir, entry))];
      for (const path of entries) await chmod(path, (await lstat(path)).isDirectory() ? 0o777 : 0o666);
      expect((await sharedEntries(dataDir)).length).toBe(entries.length);

      const server = await startFxgate(['all'], env);
      expect(server.stderr).toBe(
        `fxgate: ${dataDir} (FXGATE_DATA_DIR) was open to other users: took group and other access off ${entries.length} entries under it; the data folder is its owner's only\n`,
      );
      expect(await sharedEntries(dataDir)).toEqual([]);
      await server.stop();
      const quiet = await fxgate(['keys', 'list'], env);
      expect(quiet).toMatchObject({ code: 0, stderr: '' });
    },
  );
});

describe('DATABASE_URL through PgBouncer (Debian 1.18)', () => {
  const admin = new AdminDatabases();
  const started: ThrowawayPgBouncer[] = [];
  /** Transaction pooling, as PgBouncer ships it: it refuses the statement_timeout connection parameter. */
  let transaction: ThrowawayPgBouncer;
  /** Transaction pooling that drops the parameter instead, as an operator might set it up for the session driver. */
  let lenient: ThrowawayPgBouncer;
  /** Session pooling, as PgBouncer ships it, and dropping the parameter: a connection keeps its server session. */
  let sessionPooling: ThrowawayPgBouncer;
  let lenientSessionPooling: ThrowawayPgBouncer;
  let migrated: string;

  beforeAll(async () => {
    const serverUrl = testServices().databaseUrl;
    const ignoreStartupParameters = ['statement_timeout'];
    started.push(
      ...(await Promise.all([
        startThrowawayPgBouncer({ serverUrl, poolMode: 'transaction', poolSize: 2 }),
        startThrowawayPgBouncer({ serverUrl, poolMode: 'transaction', poolSize: 2, ignoreStartupParameters }),
        startThrowawayPgBouncer({ serverUrl, poolMode: 'session', poolSize: 2 }),
        startThrowawayPgBouncer({ serverUrl, poolMode: 'session', poolSize: 2, ignoreStartupParameters }),
      ])),
    );
    [transaction, lenient, sessionPooling, lenientSessionPooling] = started as [
      ThrowawayPgBouncer,
      ThrowawayPgBouncer,
      ThrowawayPgBouncer,
      ThrowawayPgBouncer,
    ];
    // Set before any connection: a server session reads the database's settings when it starts.
    migrated = await admin.create("SET statement_timeout = '10s'");
  });
  afterAll(async () => {
    await killAllCliProcesses();
    await Promise.all(started.map((server) => server.stop()));
    await admin.dropAll();
  });

  it('in session mode (the default), is refused at start as a configuration error, naming the setting', async () => {
    for (const pgbouncer of [transaction, lenient]) {
      const url = pgbouncer.urlFor(migrated);
      const result = await fxgate(['migrate'], { DATABASE_URL: url });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^fxgate: FXGATE_DB_POOL_MODE is session, but two connections to ${escapeRegExp(url)} \\(DATABASE_URL\\) were served ` +
            'by one PostgreSQL session \\(server process [0-9]+\\): a pooler in transaction pooling is in between ' +
            '\\(PgBouncer pool_mode = transaction\\), where statements prepared on a connection are lost\\. ' +
            'Set FXGATE_DB_POOL_MODE=transaction\\.\n$',
        ),
      );
    }
  });

  it('in session mode through session pooling, is refused by PgBouncer at connection, and the message names the setting', async () => {
    const url = sessionPooling.urlFor(migrated);
    const result = await fxgate(['migrate'], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `fxgate: cannot reach PostgreSQL at ${url} (DATABASE_URL): unsupported startup parameter: statement_timeout; ` +
        'a pooler such as PgBouncer is in between, which takes no statement timeout as a connection parameter: ' +
        'with FXGATE_DB_POOL_MODE=transaction fxgate sets it in each transaction instead\n',
    );
  });

  it("in session mode through session pooling that drops the timeout, runs, and says the server's own timeout applies", async () => {
    const url = lenientSessionPooling.urlFor(await admin.create("SET statement_timeout = '30s'"));
    const result = await fxgate(['migrate'], { DATABASE_URL: url });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nup to date: /);
    expect(result.stderr).toBe(
      `fxgate: the statement timeout fxgate gives its connections (10000 ms) did not reach ${url}: a pooler in between ` +
        "dropped it (PgBouncer's ignore_startup_parameters); statements run under the server's own, 30s\n",
    );
  });

  it("in transaction mode, runs; and warns when the role's own statement_timeout is none", async () => {
    const timed = await fxgate(['migrate'], {
      DATABASE_URL: transaction.urlFor(migrated),
      FXGATE_DB_POOL_MODE: 'transaction',
    });
    expect(timed).toMatchObject({ code: 0, stderr: '' });
    const untimed = transaction.urlFor(await admin.create('SET statement_timeout = 0'));
    const warned = await fxgate(['migrate'], { DATABASE_URL: untimed, FXGATE_DB_POOL_MODE: 'transaction' });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(
      `fxgate: FXGATE_DB_POOL_MODE=transaction: statements outside a transaction run under the server's own statement_timeout, ` +
        `which is 0 (none) at ${untimed}; set one for fxgate's role, e.g. ALTER ROLE <role> SET statement_timeout = '10s'\n`,
    );
  });

  it(
    'two fxgate core processes started at once on an empty database both migrate it and serve; each migration is applied once',
    { timeout: 120_000 },
    async () => {
      const empty = await admin.create("SET statement_timeout = '10s'", { migrated: false });
      const env = {
        DATABASE_URL: transaction.urlFor(empty),
        FXGATE_DB_POOL_MODE: 'transaction',
        FXGATE_SECRETS_KEY: generateSealingKey(),
        ...testRedisEnv(),
        HOST: '127.0.0.1',
        PORT: '0',
      };
      const cores = [startCli(['core'], env), startCli(['core'], env)];
      const urls = await Promise.all(
        cores.map(async (core) => (await core.waitFor(/^fxgate core: listening on (http:\/\/\S+)$/m))[1]!),
      );
      for (const url of urls) expect((await request(`${url}/readyz`)).statusCode).toBe(200);
      const applied = await admin.query<{ name: string; times: number }>(
        empty,
        'SELECT name, count(*)::int AS times FROM schema_migrations GROUP BY name ORDER BY name',
      );
      expect(applied).toEqual((await listMigrations()).map((name) => ({ name, times: 1 })));
      for (const core of cores) expect((await core.stop('SIGTERM')).code).toBe(0);
    },
  );
});

/** Test databases made and dropped on the server directly, as an operator's would be. */
class AdminDatabases {
  private readonly names: string[] = [];

  /** A new database with `setting` (an ALTER DATABASE ... clause); migrated, from the run's template, unless told. */
  async create(setting: string, options: { migrated?: boolean } = {}): Promise<string> {
    const name = `fxgate_t_${randomBytes(6).toString('hex')}`;
    const template = options.migrated === false ? undefined : process.env[TEMPLATE_ENV.postgres];
    await this.run(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
    this.names.push(name);
    await this.run(`ALTER DATABASE ${name} ${setting}`);
    return this.urlOf(name);
  }

  async query<Row extends pg.QueryResultRow>(url: string, sql: string): Promise<Row[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<Row>(sql)).rows;
    } finally {
      await client.end();
    }
  }

  async dropAll(): Promise<void> {
    for (const name of this.names.splice(0)) await this.run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }

  private urlOf(name: string): string {
    const url = new URL(testServices().databaseUrl);
    url.pathname = `/${name}`;
    return url.toString();
  }

  private async run(sql: string): Promise<void> {
    await this.query(testServices().databaseUrl, sql);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
