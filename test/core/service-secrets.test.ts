import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadOrCreateServiceSecret, SERVICE_SECRET_BYTES } from '../../src/core/service-secrets.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../support/databases.js';

describe.each(DATABASE_DRIVERS)('service secrets on $driver', ({ create }) => {
  // One database per driver for the file: PGlite takes seconds to start.
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  });
  afterAll(async () => database?.drop());

  it('creates a secret once and returns the same bytes afterwards', async () => {
    const first = await loadOrCreateServiceSecret(database.db, 'cursor');
    expect(first).toHaveLength(SERVICE_SECRET_BYTES);
    expect((await loadOrCreateServiceSecret(database.db, 'cursor')).equals(first)).toBe(true);
    expect((await loadOrCreateServiceSecret(database.db, 'other')).equals(first)).toBe(false);
  });

  it('converges on one value when many first uses race', async () => {
    const db = database.db;
    const secrets = await Promise.all(Array.from({ length: 20 }, () => loadOrCreateServiceSecret(db, 'race')));
    expect(new Set(secrets.map((s) => s.toString('hex'))).size).toBe(1);
  });
});
