/**
 * v3's OpenAPI snapshot as the gateway reads it: where it is from the sources and once built,
 * that it is what the core serves, and a missing or foreign file named with its fix.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { coreV3Document } from '../../../src/core/openapi/declared-operations.js';
import { v3DocumentPath } from '../../../src/gateway/legacy/v3-contract/document.js';
import { loadV3Snapshot } from '../../../src/gateway/openapi/v3-snapshot.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const temporary: string[] = [];
afterAll(async () => Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("v3's OpenAPI snapshot", () => {
  it('is docs/openapi/v3.json from the sources, and dist/assets/v3-openapi.json once built', () => {
    expect(v3DocumentPath()).toBe(join(ROOT, 'docs/openapi/v3.json'));
    expect(v3DocumentPath(new URL('dist/gateway/legacy/v3-contract/document.js', `file://${ROOT}`).href)).toBe(
      join(ROOT, 'dist/assets/v3-openapi.json'),
    );
  });

  it('is the document the core serves', async () => {
    expect(await loadV3Snapshot()).toEqual(JSON.parse(JSON.stringify(coreV3Document())));
  });

  it('names the fix when it is missing or not an OpenAPI document', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fxgate-v3-snapshot-'));
    temporary.push(dir);
    await expect(loadV3Snapshot(join(dir, 'none.json'))).rejects.toThrow(
      `v3's OpenAPI snapshot is missing at ${join(dir, 'none.json')}: run \`npm run build\``,
    );
    await writeFile(join(dir, 'other.json'), '{"hello": "world"}');
    await expect(loadV3Snapshot(join(dir, 'other.json'))).rejects.toThrow(
      `${join(dir, 'other.json')} is not an OpenAPI document: run \`npm run openapi\` to write it again`,
    );
  });
});
