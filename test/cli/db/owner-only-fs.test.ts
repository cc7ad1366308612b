/**
 * PGlite's files in a data folder are their owner's only, whatever the umask: the folder, what
 * a new cluster unpacks, and what PostgreSQL makes later (relation files, WAL segments, the
 * relcache init files it rewrites at each start). The same writes through PGlite's own file
 * system leave files open to everyone, which is what this guards against.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPglite } from '../../../src/cli/db/pglite-database.js';
import { entryCount, sharedEntries, withUmask } from '../../support/file-modes.js';

/** Enough rows, rewritten and checkpointed, for PostgreSQL to make new relation files and WAL segments. */
async function write(db: { exec(sql: string): Promise<unknown> }, table: string): Promise<void> {
  await db.exec(`CREATE TABLE ${table} (id int, body text)`);
  await db.exec(`INSERT INTO ${table} SELECT g, repeat('x', 500) FROM generate_series(1, 20000) g`);
  await db.exec(`VACUUM FULL ${table}`);
  await db.exec('CHECKPOINT');
}

describe('openPglite on a data folder, under umask 0022', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fxgate-owner-only-'));
  });
  afterAll(async () => {
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it("makes the folder and every file and folder in it, then and later, its owner's only", async () => {
    const folder = join(parent, 'pglite');
    await withUmask(0o022, async () => {
      const db = await openPglite(folder);
      try {
        expect(await sharedEntries(folder)).toEqual([]);
        await write(db, 'first');
      } finally {
        await db.close();
      }
      const files = await entryCount(folder);
      // A later start rewrites its init files; more rows make more files.
      const again = await openPglite(folder);
      try {
        await write(again, 'second');
      } finally {
        await again.close();
      }
      expect(await entryCount(folder)).toBeGreaterThan(files);
    });
    expect(await sharedEntries(folder)).toEqual([]);
  });

  it("is needed: PGlite's own file system leaves the same folder open to others", async () => {
    const folder = join(parent, 'plain');
    await withUmask(0o022, async () => {
      const db = await PGlite.create({ dataDir: folder });
      try {
        await write(db, 'first');
      } finally {
        await db.close();
      }
    });
    expect((await sharedEntries(folder)).length).toBeGreaterThan(100);
  });
});
