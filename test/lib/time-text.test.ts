/**
 * Times as operators write them: ISO 8601 instants (zone required, real calendar dates only),
 * fixed-length ISO 8601 durations, intervals in both forms, the usage report's "since", and the
 * two header forms of an instant checked against their RFCs' grammar.
 */
import { describe, expect, it } from 'vitest';

import { TimeTextError } from '../../src/lib/errors/internal-errors.js';
import {
  imfFixdate,
  instantText,
  parseInstant,
  parseInterval,
  parseIntervals,
  parseIsoDuration,
  parseSince,
  spanText,
  structuredDate,
} from '../../src/lib/time-text.js';
import { IMF_FIXDATE, SF_DATE } from '../support/http-date-grammar.js';

const HOUR = 3_600_000;

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TimeTextError);
    return (error as Error).message;
  }
  throw new Error('not refused');
}

describe('parseInstant', () => {
  it.each([
    ['2026-12-31T23:59:59Z', Date.UTC(2026, 11, 31, 23, 59, 59)],
    ['2026-12-31T23:59Z', Date.UTC(2026, 11, 31, 23, 59)],
    ['2026-12-31T18:59:59-05:00', Date.UTC(2026, 11, 31, 23, 59, 59)],
    ['2027-01-01T01:00:00+01:00', Date.UTC(2027, 0, 1)],
    ['2026-01-01T00:00:00.250Z', Date.UTC(2026, 0, 1) + 250],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    [' 2026-01-01T00:00:00z ', Date.UTC(2026, 0, 1)],
  ])('reads %j', (text, ms) => {
    expect(parseInstant(text)).toBe(ms);
  });

  it('refuses an instant without its zone, saying how to add one', () => {
    expect(refusal(() => parseInstant('2026-12-31T23:59:59'))).toMatch(/add its zone, Z for UTC or an offset/);
  });

  it.each([
    '2026-02-30T00:00:00Z',
    '2027-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-12-31T24:00:00Z',
    '2026-12-31T23:60:00Z',
  ])('refuses %j, a date or time that does not exist (never rolled over)', (text) => {
    expect(refusal(() => parseInstant(text))).toMatch(/names no real date and time/);
  });

  it.each(['tomorrow', '2026-12-31', '31/12/2026', '20261231T235959Z', '', '1969-12-31T23:59:59Z'])(
    'refuses %j',
    (text) => {
      expect(refusal(() => parseInstant(text))).toMatch(/2026-12-31T23:59:59Z|no real date/);
    },
  );
});

describe('parseIsoDuration', () => {
  it.each([
    ['PT1H', HOUR],
    ['PT90M', 90 * 60_000],
    ['P1DT12H', 36 * HOUR],
    ['P2W', 14 * 24 * HOUR],
    ['PT0.5S', 500],
    ['pt2h', 2 * HOUR],
  ])('reads %j', (text, ms) => {
    expect(parseIsoDuration(text)).toBe(ms);
  });

  it('refuses years and months, whose length depends on the calendar', () => {
    expect(refusal(() => parseIsoDuration('P1M'))).toMatch(/years and months have no fixed length/);
    expect(refusal(() => parseIsoDuration('P1Y'))).toMatch(/years and months/);
  });

  it.each(['P', 'PT', '1H', 'PT1', 'PTH', 'P1H'])('refuses %j', (text) => {
    expect(refusal(() => parseIsoDuration(text))).toMatch(/not an ISO 8601 duration such as PT1H/);
  });

  it('refuses an empty duration', () => {
    expect(refusal(() => parseIsoDuration('PT0S'))).toMatch(/empty duration/);
  });
});

describe('parseInterval and parseIntervals', () => {
  const start = Date.UTC(2026, 11, 10, 15);

  it('reads start/duration and start/end', () => {
    expect(parseInterval('2026-12-10T15:00:00Z/PT1H')).toEqual({ start, end: start + HOUR });
    expect(parseInterval('2026-12-10T15:00:00Z/2026-12-10T17:30:00Z')).toEqual({ start, end: start + 2.5 * HOUR });
  });

  it('reads a list in its order', () => {
    expect(parseIntervals('2026-12-10T15:00:00Z/PT1H, 2026-12-17T15:00:00Z/PT2H')).toEqual([
      { start, end: start + HOUR },
      { start: start + 7 * 24 * HOUR, end: start + 7 * 24 * HOUR + 2 * HOUR },
    ]);
    expect(parseIntervals('')).toEqual([]);
  });

  it('refuses what is not start/duration or start/end, saying which form to write', () => {
    for (const text of [
      '2026-12-10T15:00:00Z',
      'PT1H/2026-12-10T15:00:00Z',
      '2026-12-10T15:00:00Z/PT1H/PT1H',
      '/PT1H',
    ]) {
      expect(
        refusal(() => parseInterval(text)),
        text,
      ).toMatch(/start\/duration or start\/end/);
    }
  });

  it('refuses a window that ends before it starts, or an empty one', () => {
    expect(refusal(() => parseInterval('2026-12-10T15:00:00Z/2026-12-10T14:00:00Z'))).toMatch(/ends before it starts/);
    expect(refusal(() => parseInterval('2026-12-10T15:00:00Z/2026-12-10T15:00:00Z'))).toMatch(/ends before it starts/);
  });

  it('names the window of a list that is wrong, and an empty entry', () => {
    expect(refusal(() => parseIntervals('2026-12-10T15:00:00Z/PT1H,2026-12-17T15:00:00Z/P1M'))).toMatch(
      /^window 2: .*years and months/,
    );
    expect(refusal(() => parseIntervals('2026-12-10T15:00:00Z/PT1H,,2026-12-17T15:00:00Z/PT1H'))).toMatch(
      /window 2 is empty/,
    );
  });
});

describe('parseSince', () => {
  const now = Date.UTC(2026, 11, 20, 12);

  it.each([
    ['7d', now - 7 * 24 * HOUR],
    ['24h', now - 24 * HOUR],
    ['30m', now - 30 * 60_000],
    ['90s', now - 90_000],
    ['2w', now - 14 * 24 * HOUR],
    ['0d', now],
    ['2026-12-01T00:00:00Z', Date.UTC(2026, 11, 1)],
    ['2026-12-01T01:00:00+01:00', Date.UTC(2026, 11, 1)],
    ['2026-12-01', Date.UTC(2026, 11, 1)],
  ])('reads %j', (text, ms) => {
    expect(parseSince(text, now)).toBe(ms);
  });

  it.each(['7', 'd7', '7 days', '-7d', '7y', 'P7D', 'yesterday', ''])('refuses %j, saying what to write', (text) => {
    expect(refusal(() => parseSince(text, now))).toMatch(
      /such as 7d, 24h or 30m .* or an ISO 8601 timestamp such as 2026-12-01T00:00:00Z/,
    );
  });

  it('refuses a timestamp without its zone and a date that does not exist', () => {
    expect(refusal(() => parseSince('2026-12-01T00:00:00', now))).toMatch(/add its zone.*7d, 24h or 30m/);
    expect(refusal(() => parseSince('2026-02-30', now))).toMatch(/names no real date/);
  });

  it('refuses a duration reaching back before 1970', () => {
    expect(refusal(() => parseSince('999999999d', now))).toMatch(/before 1970/);
  });
});

describe('the header forms of an instant', () => {
  it("writes RFC 9110's IMF-fixdate", () => {
    for (const ms of [Date.UTC(2026, 11, 31, 23, 59, 59), Date.UTC(2026, 0, 1), Date.UTC(2030, 5, 9, 8, 7, 6, 999)]) {
      expect(imfFixdate(ms)).toMatch(IMF_FIXDATE);
    }
    expect(imfFixdate(Date.UTC(2026, 11, 31, 23, 59, 59))).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
    expect(imfFixdate(Date.UTC(2026, 0, 1))).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
  });

  it("writes RFC 9745's structured-field Date in whole seconds", () => {
    expect(structuredDate(Date.UTC(2026, 0, 1))).toBe('@1767225600');
    expect(structuredDate(Date.UTC(2026, 0, 1) + 999)).toBe('@1767225600');
    expect(structuredDate(Date.UTC(2026, 0, 1))).toMatch(SF_DATE);
  });
});

describe('the instants and spans of the migration schedule', () => {
  it('writes an instant in UTC without a fraction of .000, and keeps any other', () => {
    expect(instantText(parseInstant('2026-12-31T18:59:59-05:00'))).toBe('2026-12-31T23:59:59Z');
    expect(instantText(parseInstant('2026-12-31T23:59:59.250Z'))).toBe('2026-12-31T23:59:59.250Z');
  });

  it.each([
    [0, '0 s'],
    [999, '0 s'],
    [45_000, '45 s'],
    [12 * 60_000 + 3_999, '12 min 3 s'],
    [60 * 60_000, '1 h'],
    [3 * HOUR + 5 * 60_000 + 59_000, '3 h 5 min'],
    [48 * HOUR, '2 d'],
    [48 * HOUR + 59 * 60_000, '2 d'],
    [32 * 24 * HOUR + 4 * HOUR + 59 * 60_000, '32 d 4 h'],
    [-(3 * 24 * HOUR + HOUR), '3 d 1 h'],
  ])('writes %d ms as %j: its two largest units, rounded down, the sign left to the caller', (ms, text) => {
    expect(spanText(ms)).toBe(text);
  });
});
