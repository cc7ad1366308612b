import { describe, expect, it } from 'vitest';

import { configSchema } from '../../src/lib/config.js';
import { describeUnknownSetting, nearestSetting, unknownSettings } from '../../src/lib/setting-names.js';

const SETTINGS = Object.keys(configSchema.shape);

describe('nearestSetting', () => {
  it.each([
    ['a missing letter', 'FXGATE_V1_BROWNOUT', 'FXGATE_V1_BROWNOUTS'],
    ['a letter too many', 'FXGATE_DRAIN_DELAYS_MS', 'FXGATE_DRAIN_DELAY_MS'],
    ['two letters swapped', 'FXGATE_SHADOW_SAMPEL', 'FXGATE_SHADOW_SAMPLE'],
    ['two letters swapped in a short name', 'FXGATE_PROT', 'PORT'],
    ['a wrong letter', 'FXGATE_SPREAD_BPX', 'FXGATE_SPREAD_BPS'],
    ['the words in another order', 'FXGATE_BROWNOUTS_V1', 'FXGATE_V1_BROWNOUTS'],
    ['the words in another order, and a typo', 'FXGATE_READS_RATE_LIMT', 'FXGATE_RATE_LIMIT_READS'],
    ["fxgate's prefix on a setting without it", 'FXGATE_PORT', 'PORT'],
    ["fxgate's prefix on a setting without it", 'FXGATE_REDIS_URL', 'REDIS_URL'],
    ['lower case', 'FXGATE_log_level', 'LOG_LEVEL'],
  ])('finds the setting behind %s: %s -> %s', (_, typo, setting) => {
    expect(nearestSetting(typo, SETTINGS)).toBe(setting);
  });

  it.each(['FXGATE_FOO', 'FXGATE_X', 'FXGATE_ENABLE_EVERYTHING', 'FXGATE_WEBHOOK_SECRET', 'FXGATE_'])(
    'suggests nothing for %s, near no setting',
    (name) => {
      expect(nearestSetting(name, SETTINGS)).toBeUndefined();
    },
  );

  it('prefers the nearest, and the first listed of two as near', () => {
    expect(nearestSetting('FXGATE_ADMIN_PORTS', ['FXGATE_ADMIN_HOST', 'FXGATE_ADMIN_PORT'])).toBe('FXGATE_ADMIN_PORT');
    expect(nearestSetting('FXGATE_AB', ['FXGATE_AC', 'FXGATE_AD'])).toBe('FXGATE_AC');
    expect(nearestSetting('FXGATE_AB', ['FXGATE_AD', 'FXGATE_AC'])).toBe('FXGATE_AD');
  });
});

describe('unknownSettings', () => {
  const known = new Set(['FXGATE_V1_BROWNOUTS', 'PORT']);

  it("lists the prefixed names it does not know, sorted, with the nearest setting; other programs' names are not its business", () => {
    expect(
      unknownSettings(
        {
          PATH: '/bin',
          PORT: '1',
          FXGATE_V1_BROWNOUTS: 'x',
          FXGATE_ZZZ: '1',
          FXGATE_V1_BROWNOUT: 'x',
          fxgate_lower: '1',
        },
        known,
        [...known],
      ),
    ).toEqual([
      { name: 'FXGATE_V1_BROWNOUT', suggestion: 'FXGATE_V1_BROWNOUTS' },
      { name: 'FXGATE_ZZZ', suggestion: undefined },
    ]);
  });

  it('passes over an unknown name that is empty or unset, as a setting that is counts as unset', () => {
    expect(unknownSettings({ FXGATE_V1_BROWNOUT: '', FXGATE_ZZZ: undefined }, known, [...known])).toEqual([]);
  });
});

describe('describeUnknownSetting', () => {
  it('names the unknown name first, and the suggestion when there is one', () => {
    expect(describeUnknownSetting({ name: 'FXGATE_V1_BROWNOUT', suggestion: 'FXGATE_V1_BROWNOUTS' })).toBe(
      'FXGATE_V1_BROWNOUT is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?)',
    );
    expect(describeUnknownSetting({ name: 'FXGATE_ZZZ', suggestion: undefined })).toBe(
      'FXGATE_ZZZ is not a setting fxgate knows',
    );
  });
});
