import { randomBytes } from 'node:crypto';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listMigrations } from '../../../src/cli/db/migrate.js';
import { testServices } from '../../support/services.js';
import { fxgate } from '../in-process-cli.js';

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServices().databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('fxgate migrate', () => {
  const name = `fxgate_t_${randomBytes(6).toString('hex')}`;
  let url: string;
  beforeAll(async () => {
    await admin((client) => client.query(`CREATE DATABASE ${name}`));
    const parsed = new URL(testServices().databaseUrl);
    parsed.pathname = `/${name}`;
    url = parsed.toString();
  });
  afterAll(async () => {
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });

  it('applies every migration to an empty database, then finds nothing to do', async () => {
    const migrations = await listMigrations();
    const first = await fxgate(['migrate'], { DATABASE_URL: url });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`database: PostgreSQL at ${url}\n${migrations.map((m) => `applied: ${m}\n`).join('')}`);

    const second = await fxgate(['migrate'], { DATABASE_URL: url });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`database: PostgreSQL at ${url}\nup to date: ${migrations.join(', ')}\n`);
  });

  it('says which database it could not reach', async () => {
    const result = await fxgate(['migrate'], { DATABASE_URL: 'postgres://fxgate:secret@127.0.0.1:1/nowhere' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^fxgate: cannot reach PostgreSQL at postgres:\/\/fxgate:\*\*\*@127\.0\.0\.1:1\/nowhere \(DATABASE_URL\): /,
    );
  });
});
