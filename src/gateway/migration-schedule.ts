/**
 * The migration schedule: what the gateway will do to v1 and v2 clients and when, worked out
 * from the very plans it applies (the generations' lifecycle, legacy/runtime/generation-lifecycle.ts,
 * and shadow mode's who-answers-whom, shadow/shadow-mode.ts) and a clock. A pure function of
 * those two, so the start-up lines, `GET /admin/schedule` and `fxgate schedule` cannot differ
 * from what the gateway does: deprecation and sunset instants, what follows the sunset, each
 * brownout window (past, active or upcoming, and how far off), the orgs exempt from them,
 * shadow mode and the cut-over orgs.
 *
 * It touches nothing: it reads the plans it is given and formats text. The JSON form is the wire
 * form too (the CLI reads it back with `migrationScheduleSchema` and prints the same lines).
 */
import { z } from 'zod';

import { instantText, spanText } from '../lib/time-text.js';
import { LEGACY_GENERATIONS, type LegacyGeneration } from './legacy/declarations/legacy-operations.js';
import type { ResolvedRetirement } from './legacy/runtime/generation-lifecycle.js';
import type { ShadowSettings } from './shadow/shadow-mode.js';

/** An instant and how far off it is: whole seconds, negative once past. */
const instantPlanSchema = z.object({ at: z.string(), secondsUntil: z.number().int() });

const brownoutPlanSchema = z.object({
  start: z.string(),
  end: z.string(),
  /** Start included, end not, as the gateway refuses. */
  state: z.enum(['past', 'active', 'upcoming']),
  secondsUntilStart: z.number().int(),
  secondsUntilEnd: z.number().int(),
});

const generationPlanSchema = z.object({
  deprecation: instantPlanSchema.nullable(),
  sunset: instantPlanSchema.nullable(),
  afterSunset: z.enum(['refuse', 'serve']),
  /** What a request of an org that is not exempt gets now: refused for the sunset or a brownout, or served (null). */
  refusedNow: z.enum(['sunset', 'brownout']).nullable(),
  brownouts: z.array(brownoutPlanSchema),
  brownoutExempt: z.array(z.string()),
});

const shadowPlanSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('off') }),
  z.object({
    mode: z.literal('on'),
    /** The legacy service's origin: no credentials, path or query, which may hold secrets. */
    legacyOrigin: z.string(),
    sample: z.number().min(0).max(1),
    serve: z.enum(['gateway', 'legacy']),
  }),
]);

export const migrationScheduleSchema = z.object({
  now: z.string(),
  migrationUrl: z.string(),
  generations: z.object({ v1: generationPlanSchema, v2: generationPlanSchema }),
  shadow: shadowPlanSchema,
  /** Served by the gateway while the others get the legacy service's answer (shadow mode, serve legacy). */
  cutoverOrgs: z.array(z.string()),
});

export type MigrationSchedule = z.infer<typeof migrationScheduleSchema>;
export type GenerationPlan = z.infer<typeof generationPlanSchema>;
export type BrownoutPlan = z.infer<typeof brownoutPlanSchema>;

/** What the gateway applies: each generation's resolved plan, the migration guide, and shadow mode's settings (null when off). */
export interface ScheduleSource {
  readonly plans: Readonly<Record<LegacyGeneration, ResolvedRetirement>>;
  readonly migrationUrl: string;
  readonly shadow: ShadowSettings | null;
}

function secondsUntil(at: number, now: number): number {
  // Truncated toward zero, so one second before is 1 and one after is -1; `|| 0` turns -0 into 0.
  return Math.trunc((at - now) / 1000) || 0;
}

function instantPlan(at: number | undefined, now: number): z.infer<typeof instantPlanSchema> | null {
  return at === undefined ? null : { at: instantText(at), secondsUntil: secondsUntil(at, now) };
}

function generationPlan(plan: ResolvedRetirement, now: number): GenerationPlan {
  const brownouts = [...plan.brownouts]
    .sort((a, b) => a.start - b.start)
    .map((window) => ({
      start: instantText(window.start),
      end: instantText(window.end),
      state: now >= window.end ? 'past' : now >= window.start ? 'active' : 'upcoming',
      secondsUntilStart: secondsUntil(window.start, now),
      secondsUntilEnd: secondsUntil(window.end, now),
    })) satisfies BrownoutPlan[];
  // The order GenerationLifecycle.refusal decides in: the sunset first, then a brownout.
  const retired = plan.sunsetAt !== undefined && now >= plan.sunsetAt;
  const refusedNow = retired
    ? plan.afterSunset === 'refuse'
      ? 'sunset'
      : null
    : brownouts.some((window) => window.state === 'active')
      ? 'brownout'
      : null;
  return {
    deprecation: instantPlan(plan.deprecatedAt, now),
    sunset: instantPlan(plan.sunsetAt, now),
    afterSunset: plan.afterSunset,
    refusedNow,
    brownouts,
    brownoutExempt: [...plan.brownoutExempt].sort(),
  };
}

/** The origin alone: a URL's user, password, path and query are the operator's and may be secret. */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : '(not a URL)';
}

/** The schedule at `now` (ms since the epoch). */
export function migrationSchedule(source: ScheduleSource, now: number): MigrationSchedule {
  const generations = Object.fromEntries(
    LEGACY_GENERATIONS.map((generation) => [generation, generationPlan(source.plans[generation], now)]),
  ) as Record<LegacyGeneration, GenerationPlan>;
  const { shadow } = source;
  return {
    now: instantText(now),
    migrationUrl: source.migrationUrl,
    generations,
    shadow:
      shadow === null
        ? { mode: 'off' }
        : { mode: 'on', legacyOrigin: originOf(shadow.legacyUrl), sample: shadow.sample, serve: shadow.serve },
    cutoverOrgs: shadow?.serve === 'legacy' ? [...shadow.cutoverOrgs].sort() : [],
  };
}

/** `in 3 d 1 h`, `3 d 1 h ago`, or `now`. */
function relative(seconds: number): string {
  if (seconds === 0) return 'now';
  const span = spanText(seconds * 1000);
  return seconds > 0 ? `in ${span}` : `${span} ago`;
}

function count(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

function deprecationText(plan: GenerationPlan): string {
  const { deprecation } = plan;
  if (deprecation === null) return 'not deprecated';
  return deprecation.secondsUntil <= 0
    ? `deprecated since ${deprecation.at}`
    : `deprecated from ${deprecation.at} (${relative(deprecation.secondsUntil)})`;
}

function sunsetText(plan: GenerationPlan): string {
  const { sunset } = plan;
  if (sunset === null) return 'no sunset';
  const after = plan.afterSunset === 'refuse' ? 'refused (410)' : 'served all the same';
  return sunset.secondsUntil > 0
    ? `sunset ${sunset.at} (${relative(sunset.secondsUntil)}), then ${after}`
    : `sunset ${sunset.at} (${relative(sunset.secondsUntil)}), now ${after}`;
}

function brownoutText(generation: LegacyGeneration, plan: GenerationPlan, window: BrownoutPlan): string {
  const when =
    window.state === 'upcoming'
      ? relative(window.secondsUntilStart)
      : window.state === 'active'
        ? `active, ends ${relative(window.secondsUntilEnd)}`
        : `past, ended ${relative(window.secondsUntilEnd)}`;
  const exempt = plan.brownoutExempt.length === 0 ? 'none' : count(plan.brownoutExempt.length, 'org');
  return `${generation} brownout ${window.start} to ${window.end} (${when}), exempt: ${exempt}`;
}

function shadowText(schedule: MigrationSchedule): string {
  const { shadow } = schedule;
  if (shadow.mode === 'off') return 'shadow mode: off';
  // toPrecision: 0.07 * 100 is 7.000000000000001 in binary floating point.
  const share = `${Number((shadow.sample * 100).toPrecision(12))}% of reads compared`;
  if (shadow.serve === 'gateway')
    return `shadow mode: beside ${shadow.legacyOrigin}; the gateway answers clients, ${share}`;
  const cutover = schedule.cutoverOrgs.length;
  return `shadow mode: beside ${shadow.legacyOrigin}; the legacy service answers clients${cutover === 0 ? '' : ` but those of ${count(cutover, 'cut-over org')}, which the gateway answers`}, ${share}`;
}

/** The schedule for people, one line each: each generation, its brownouts, then shadow mode. */
export function scheduleLines(schedule: MigrationSchedule): string[] {
  const lines: string[] = [];
  for (const generation of LEGACY_GENERATIONS) {
    const plan = schedule.generations[generation];
    lines.push(`${generation}: ${deprecationText(plan)}, ${sunsetText(plan)}`);
    for (const window of plan.brownouts) lines.push(brownoutText(generation, plan, window));
  }
  lines.push(shadowText(schedule));
  return lines;
}
