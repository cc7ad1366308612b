/**
 * The published v3 document as the gateway's v3 contract reads it: the snapshot the migration
 * guides read too (docs/openapi/v3.json from source), and a start-up error naming the fix when it
 * is missing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadV3Document, V3_DOCUMENT } from '../../../../src/gateway/legacy/v3-contract/document.js';

const ROOT = join(import.meta.dirname, '../../../..');

describe('the v3 document', () => {
  it("is the checkout's docs/openapi/v3.json, run from source", () => {
    const published = JSON.parse(readFileSync(join(ROOT, 'docs/openapi/v3.json'), 'utf8')) as { paths: unknown };
    expect(V3_DOCUMENT.paths).toEqual(published.paths);
  });

  it('is refused, naming where it was looked for and the fix, when it is missing', () => {
    expect(() => loadV3Document(join(ROOT, 'nowhere/v3.json'))).toThrow(
      /snapshot is missing at .*nowhere\/v3\.json: run `npm run build`/,
    );
  });
});
