/**
 * The migration schedule as a pure function of the gateway's own plans and a clock: at a fixed
 * instant, each instant's seconds-until, each brownout's state, the exempt orgs, shadow mode
 * (its origin only) and the cut-over orgs; the lines people read; and, for any clock and any
 * windows, the refusal it announces is the one GenerationLifecycle makes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { GenerationLifecycle } from '../../src/gateway/legacy/runtime/generation-lifecycle.js';
import {
  migrationSchedule,
  migrationScheduleSchema,
  scheduleLines,
  type ScheduleSource,
} from '../../src/gateway/migration-schedule.js';
import { shadowSettings } from '../../src/gateway/shadow/shadow-mode.js';
import { parseInstant, parseIntervals } from '../../src/lib/time-text.js';

const EXEMPT = ['0190C5A8-7D2E-7C1A-9F3B-2A4D6E8F0B1C', '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1a'];
const CUTOVER = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1d';
/** 2026-11-28T09:30:00Z: inside the first brownout, 3 d 0 h 30 min before the second. */
const NOW = parseInstant('2026-11-28T09:30:00Z');

function source(lifecycle: GenerationLifecycle, shadow: ScheduleSource['shadow']): ScheduleSource {
  return { plans: lifecycle.plans, migrationUrl: lifecycle.migrationUrl, shadow };
}

const lifecycle = new GenerationLifecycle({
  migrationUrl: 'https://docs.example.test/migrate',
  v1: {
    deprecatedAt: parseInstant('2026-01-01T00:00:00Z'),
    sunsetAt: parseInstant('2026-12-31T23:59:59Z'),
    afterSunset: 'refuse',
    // Written out of order: the schedule shows them by start.
    brownouts: parseIntervals('2026-12-01T10:00:00Z/2026-12-01T11:00:00Z,2026-11-28T09:00:00Z/PT1H'),
    brownoutExempt: EXEMPT,
  },
  v2: { deprecatedAt: parseInstant('2027-01-01T00:00:00Z'), afterSunset: 'serve' },
});

describe('the migration schedule', () => {
  it('gives each instant and how far off it is, at a fixed clock', () => {
    const schedule = migrationSchedule(
      source(
        lifecycle,
        shadowSettings({
          legacyUrl: 'http://ops:secret@legacy.internal:8080/base?token=x',
          sample: 0.25,
          serve: 'legacy',
          cutoverOrgs: [CUTOVER.toUpperCase()],
        }),
      ),
      NOW,
    );
    expect(migrationScheduleSchema.parse(schedule)).toEqual(schedule);
    expect(schedule).toEqual({
      now: '2026-11-28T09:30:00Z',
      migrationUrl: 'https://docs.example.test/migrate',
      generations: {
        v1: {
          deprecation: { at: '2026-01-01T00:00:00Z', secondsUntil: -(331 * 86_400 + 9 * 3600 + 1800) },
          sunset: { at: '2026-12-31T23:59:59Z', secondsUntil: 33 * 86_400 + 14 * 3600 + 29 * 60 + 59 },
          afterSunset: 'refuse',
          refusedNow: 'brownout',
          brownouts: [
            {
              start: '2026-11-28T09:00:00Z',
              end: '2026-11-28T10:00:00Z',
              state: 'active',
              secondsUntilStart: -1800,
              secondsUntilEnd: 1800,
            },
            {
              start: '2026-12-01T10:00:00Z',
              end: '2026-12-01T11:00:00Z',
              state: 'upcoming',
              secondsUntilStart: 3 * 86_400 + 1800,
              secondsUntilEnd: 3 * 86_400 + 5400,
            },
          ],
          brownoutExempt: ['0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1a', '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c'],
        },
        v2: {
          deprecation: { at: '2027-01-01T00:00:00Z', secondsUntil: 33 * 86_400 + 14 * 3600 + 30 * 60 },
          sunset: null,
          afterSunset: 'serve',
          refusedNow: null,
          brownouts: [],
          brownoutExempt: [],
        },
      },
      // The origin only: the URL's user, password, path and query stay out of the schedule.
      shadow: { mode: 'on', legacyOrigin: 'http://legacy.internal:8080', sample: 0.25, serve: 'legacy' },
      cutoverOrgs: [CUTOVER],
    });
    expect(scheduleLines(schedule)).toEqual([
      'v1: deprecated since 2026-01-01T00:00:00Z, sunset 2026-12-31T23:59:59Z (in 33 d 14 h), then refused (410)',
      'v1 brownout 2026-11-28T09:00:00Z to 2026-11-28T10:00:00Z (active, ends in 30 min), exempt: 2 orgs',
      'v1 brownout 2026-12-01T10:00:00Z to 2026-12-01T11:00:00Z (in 3 d), exempt: 2 orgs',
      'v2: deprecated from 2027-01-01T00:00:00Z (in 33 d 14 h), no sunset',
      'shadow mode: beside http://legacy.internal:8080; the legacy service answers clients but those of 1 cut-over org, which the gateway answers, 25% of reads compared',
    ]);
  });

  it('says a past brownout, a past sunset and what follows it, and shadow mode off', () => {
    const after = parseInstant('2027-01-02T00:00:00Z');
    const schedule = migrationSchedule(source(lifecycle, null), after);
    expect(schedule.generations.v1.refusedNow).toBe('sunset');
    expect(schedule.generations.v1.brownouts.map((window) => window.state)).toEqual(['past', 'past']);
    expect(schedule.shadow).toEqual({ mode: 'off' });
    expect(schedule.cutoverOrgs).toEqual([]);
    expect(scheduleLines(schedule)).toEqual([
      'v1: deprecated since 2026-01-01T00:00:00Z, sunset 2026-12-31T23:59:59Z (1 d ago), now refused (410)',
      'v1 brownout 2026-11-28T09:00:00Z to 2026-11-28T10:00:00Z (past, ended 34 d 14 h ago), exempt: 2 orgs',
      'v1 brownout 2026-12-01T10:00:00Z to 2026-12-01T11:00:00Z (past, ended 31 d 13 h ago), exempt: 2 orgs',
      'v2: deprecated since 2027-01-01T00:00:00Z, no sunset',
      'shadow mode: off',
    ]);
    const served = new GenerationLifecycle({
      v1: { sunsetAt: parseInstant('2026-12-31T23:59:59Z'), afterSunset: 'serve' },
    });
    const servedSchedule = migrationSchedule(source(served, null), after);
    expect(servedSchedule.generations.v1.refusedNow).toBeNull();
    expect(scheduleLines(servedSchedule)[0]).toBe(
      'v1: not deprecated, sunset 2026-12-31T23:59:59Z (1 d ago), now served all the same',
    );
    expect(scheduleLines(servedSchedule)[1]).toBe('v2: not deprecated, no sunset');
  });

  it('announces, for any clock and any windows, the refusal the lifecycle makes for an org that is not exempt', () => {
    const base = parseInstant('2026-06-01T00:00:00Z');
    const window = fc
      .tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 500 }))
      .map(([start, length]) => ({ start: base + start * 1000, end: base + (start + length) * 1000 }));
    fc.assert(
      fc.property(
        fc.array(window, { maxLength: 4 }),
        fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
        fc.constantFrom('refuse' as const, 'serve' as const),
        fc.integer({ min: -100, max: 11_000 }),
        (brownouts, sunset, afterSunset, at) => {
          let now = 0;
          const subject = new GenerationLifecycle({
            v1: {
              brownouts,
              ...(sunset === undefined ? {} : { sunsetAt: base + sunset * 1000 }),
              afterSunset,
              brownoutExempt: [EXEMPT[0]!],
            },
            now: () => now,
          });
          now = base + at * 1000;
          const announced = migrationSchedule(source(subject, null), now).generations.v1.refusedNow;
          expect(announced).toBe(subject.refusal('v1', CUTOVER)?.kind ?? null);
        },
      ),
    );
  });
});
