/**
 * A generation is a chain of declared changes (v3 -> v2 -> v1): a v2-only field rename made as
 * data alone, with no code, reaches every consumer of the declarations. An edited copy of the
 * shipped declarations (one more record change in v2's chain, and v1's own change keeping the
 * name it had) goes through the same compiler, the real gateway pipeline (the legacy harness,
 * real core), the OpenAPI document builder, the docs and the changelog; the shipped files are not
 * touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIGRATION_BLOCKERS } from '../../../mappings/blockers.js';
import { LEGACY_CONVENTIONS } from '../../../mappings/conventions.js';
import { V1_ENDPOINTS } from '../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../mappings/endpoints.v2.js';
import { V1_ERROR_CHANGES } from '../../../mappings/errors.v1.js';
import { V2_ERROR_TABLES } from '../../../mappings/errors.v2.js';
import { LEGACY_RECORDS, V2_RECORD_CHANGES } from '../../../mappings/records.js';
import { VALUE_MAPS } from '../../../mappings/value-maps.js';
import { LEGACY_WEBHOOKS } from '../../../mappings/webhooks.js';
import {
  compileLegacyMappings,
  type LegacyMappings,
  loadLegacyMappings,
} from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { renderGenerationChangelog } from '../../../src/gateway/legacy/generated-docs/changelog.js';
import {
  renderLegacyOperations,
  renderLegacyRecords,
} from '../../../src/gateway/legacy/generated-docs/legacy-reference.js';
import { buildLegacyDocument } from '../../../src/gateway/openapi/legacy-document.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { LegacyHarness } from '../../support/legacy-harness.js';

const SHIPPED = {
  conventions: LEGACY_CONVENTIONS,
  valueMaps: VALUE_MAPS,
  records: LEGACY_RECORDS,
  recordChangesV2: V2_RECORD_CHANGES,
  errorsV1: V1_ERROR_CHANGES,
  errorsV2: V2_ERROR_TABLES,
  endpointsV1: V1_ENDPOINTS,
  endpointsV2: V2_ENDPOINTS,
  webhooks: LEGACY_WEBHOOKS,
  blockers: MIGRATION_BLOCKERS,
};

/** The shipped declarations, with v2 naming a pair's base currency `base`; v1, as its own change says, keeps `buy`. */
const EDITED = {
  ...SHIPPED,
  recordChangesV2: [
    ...V2_RECORD_CHANGES,
    {
      kind: 'field-renamed',
      record: 'tradingPair',
      field: 'buy',
      to: 'base',
      source: 'ours',
      reason: 'A test of the chain: v2 names the base currency of a pair base.',
    },
  ],
  endpointsV1: {
    ...V1_ENDPOINTS,
    changes: [
      ...V1_ENDPOINTS.changes,
      {
        kind: 'field-renamed',
        record: 'tradingPair',
        field: 'base',
        to: 'buy',
        source: 'doc',
        reason: 'A test of the chain: v1 keeps the name its documentation gives.',
      },
    ],
  },
};

let shipped: LegacyMappings;
let edited: LegacyMappings;
let h: LegacyHarness;
let key: LoadedKey;

beforeAll(async () => {
  shipped = await loadLegacyMappings();
  edited = compileLegacyMappings(EDITED);
  h = await LegacyHarness.start({ mappings: edited });
  key = await h.createKey();
});

afterAll(async () => {
  await h.close();
});

describe('a v2-only field rename, declared as data only', () => {
  it('compiles from the shipped data unchanged when nothing is added', () => {
    expect(compileLegacyMappings(SHIPPED).recordsOf).toEqual(shipped.recordsOf);
    expect(Object.keys(shipped.recordsOf.v2.tradingPair!.fields)).toEqual(['buy', 'sell']);
  });

  it('is in v2 answers through the gateway pipeline, and not in v1 answers', async () => {
    const v2 = await h.v2(key, { path: 'available_markets' });
    expect(v2.status, v2.text).toBe(200);
    expect(v2.json<{ data: { tradingPairs: unknown[] } }>().data.tradingPairs).toContainEqual({
      base: 'EUR',
      sell: 'USD',
    });
    const v1 = await h.v1(key, { path: 'available_markets' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.json<{ data: { tradingPairs: unknown[] } }>().data.tradingPairs).toContainEqual({
      buy: 'EUR',
      sell: 'USD',
    });
    // The shipped v2 document does not describe the edited answer; the shipped v1 one still describes v1's.
    await expect(h.responses.verify()).rejects.toThrow(/v2\/brokerage/);
  });

  it('is in the v2 OpenAPI document, and not in v1', () => {
    const pairOf = (generation: 'v1' | 'v2') =>
      buildLegacyDocument(edited, generation).components?.schemas?.['TradingPair'] as {
        properties: Record<string, unknown>;
      };
    expect(Object.keys(pairOf('v2').properties)).toEqual(['base', 'sell']);
    expect(Object.keys(pairOf('v1').properties)).toEqual(['buy', 'sell']);
  });

  it('is in the generated legacy docs: the v2 record field with its reason, and v1 keeping its name', () => {
    const records = renderLegacyRecords(edited);
    expect(records).toContain(
      '| `base` | currency | `baseCurrency` | ours | A test of the chain: v2 names the base currency of a pair base. |',
    );
    expect(renderLegacyRecords(shipped)).not.toContain('`base`');
    const operations = renderLegacyOperations(edited);
    expect(operations).toContain("**v2's record changes**");
    expect(operations).toContain(
      '| `tradingPair.buy` is `base` | ours | A test of the chain: v2 names the base currency of a pair base. |',
    );
    expect(operations).toContain(
      '| `tradingPair.base` is `buy` | doc | A test of the chain: v1 keeps the name its documentation gives. |',
    );
  });

  it('is in the changelog: among v2 changes, and v1 declares keeping its name', () => {
    const changelog = renderGenerationChangelog(edited);
    const [v2Part, v1Part] = changelog.split('### v1, against v2');
    expect(v2Part).toContain(
      '- `tradingPair.buy` is `base` — ours: A test of the chain: v2 names the base currency of a pair base.',
    );
    expect(v2Part).toContain('- `tradingPair.base`: v3 `baseCurrency` — ours');
    expect(v1Part).toContain(
      '- `tradingPair.base` is `buy` — doc: A test of the chain: v1 keeps the name its documentation gives.',
    );
    expect(renderGenerationChangelog(shipped)).not.toContain('`tradingPair.base`');
  });
});
