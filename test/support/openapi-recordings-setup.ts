/**
 * Vitest global setup: the folder where this run's test processes record the answers they held
 * against the OpenAPI documents (openapi-recordings.ts). Made once per run: every project's
 * setup runs in the one vitest process, and the first one's folder is the run's; the test
 * processes inherit it through the environment. Removed when the run ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { RECORDINGS_ENV } from './openapi-recordings.js';

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env[RECORDINGS_ENV] !== undefined) return undefined;
  const folder = await mkdtemp(join(tmpdir(), 'fxgate-openapi-recordings-'));
  process.env[RECORDINGS_ENV] = folder;
  return async () => {
    delete process.env[RECORDINGS_ENV];
    await rm(folder, { recursive: true, force: true });
  };
}
