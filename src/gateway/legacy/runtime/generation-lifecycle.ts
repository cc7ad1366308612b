/**
 * How a legacy generation is retired: the headers that announce it on every answer, and the
 * 410 that refuses its requests during a brownout and after its sunset.
 *
 * - Headers: `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <IMF-fixdate>` (RFC 8594) and
 *   `Link: <guide>; rel="deprecation", <guide>; rel="sunset"` (RFC 8288), each present once its
 *   date is set. v1 has both dates by default; v2 has none until they are configured. Each
 *   generation links its own guide: v1 the v1 → v2 one, v2 the v2 → v3 one, by default the pages
 *   the gateway serves (`/docs/migrate/v1-to-v2`, `/docs/migrate/v2-to-v3`), root-relative
 *   because the gateway has no trusted public origin (a Host header is the client's word); a
 *   client resolves them against the URL it asked (RFC 8288, RFC 3986 section 5). Built once
 *   here, sent by every legacy answer (success, failure, route-level and server-edge).
 * - Refusals: inside a brownout window (start included, end excluded), unless the key's org is
 *   exempt, and from the sunset instant on unless told to serve, a request gets 410 with the
 *   legacy error body `{status: 'error', message}` naming the sunset and the migration guide.
 *   The operation handler asks after the token is verified (so the refusal is counted against
 *   the key) and before any upstream call or idempotency record.
 *
 * Decision: the 410 is the gateway's own answer, outside the error tables. Those tables map v3's
 * catalog, and no v3 service ever answers "this legacy generation is retired"; a catalog code
 * for it would be one v3 never raises, and a table row has one fixed message where this one
 * names configured dates and a URL. The body keeps the legacy envelope, so clients read it as
 * any other legacy error.
 *
 * Every time-based decision reads `now` (ms since the epoch), which tests move.
 */
import {
  type Config,
  DEFAULT_MIGRATION_URL,
  DEFAULT_V1_DEPRECATED_AT,
  DEFAULT_V1_SUNSET_AT,
  DEFAULT_V2_MIGRATION_URL,
} from '../../../lib/config.js';
import { GenerationRetired } from '../../../lib/errors/internal-errors.js';
import { imfFixdate, instantText, parseInstant, structuredDate, type TimeInterval } from '../../../lib/time-text.js';
import { LEGACY_GENERATIONS, type LegacyGeneration } from '../declarations/legacy-operations.js';
import type { LegacyReplyOptions } from './reply.js';

/** A generation's retirement plan; instants in ms since the epoch. */
export interface GenerationRetirement {
  /** When it was (or will be) deprecated: the `Deprecation` header. */
  readonly deprecatedAt?: number;
  /** When it is retired: the `Sunset` header, and the 410 from then on unless `afterSunset` is 'serve'. */
  readonly sunsetAt?: number;
  /** Windows in which its requests get 410, [start, end). */
  readonly brownouts?: readonly TimeInterval[];
  /** Orgs served during the brownouts all the same. */
  readonly brownoutExempt?: readonly string[];
  readonly afterSunset?: 'refuse' | 'serve';
}

export interface GenerationLifecycleOptions {
  /** v1's migration guide (v1 → v2): its `Link` target, named in its 410s; the gateway's own page unless given. */
  readonly migrationUrl?: string;
  /** v2's migration guide (v2 → v3): its `Link` target once it has dates; the gateway's own page unless given. */
  readonly v2MigrationUrl?: string;
  /** v1's plan; by default deprecated 2026-01-01T00:00:00Z, retired 2026-12-31T23:59:59Z and refused after. */
  readonly v1?: GenerationRetirement;
  /** v2's plan; by default none (no headers, never refused). */
  readonly v2?: GenerationRetirement;
  /** ms since the epoch; Date.now unless given. */
  readonly now?: () => number;
}

export const V1_RETIREMENT_DEFAULTS = {
  deprecatedAt: parseInstant(DEFAULT_V1_DEPRECATED_AT),
  sunsetAt: parseInstant(DEFAULT_V1_SUNSET_AT),
  afterSunset: 'refuse',
} as const satisfies GenerationRetirement;

/** A generation's plan as the gateway applies it: every default filled in, the exempt orgs in lower case. */
export interface ResolvedRetirement {
  readonly deprecatedAt: number | undefined;
  readonly sunsetAt: number | undefined;
  readonly brownouts: readonly TimeInterval[];
  readonly brownoutExempt: ReadonlySet<string>;
  readonly afterSunset: 'refuse' | 'serve';
}

function resolve(generation: LegacyGeneration, given: GenerationRetirement | undefined): ResolvedRetirement {
  const plan: GenerationRetirement = given ?? (generation === 'v1' ? V1_RETIREMENT_DEFAULTS : {});
  const { deprecatedAt, sunsetAt } = plan;
  for (const [name, at] of [
    ['deprecatedAt', deprecatedAt],
    ['sunsetAt', sunsetAt],
  ] as const) {
    if (at !== undefined && !Number.isFinite(at))
      throw new RangeError(`${generation} ${name} must be a time (ms since the epoch), got ${at}`);
  }
  if (deprecatedAt !== undefined && sunsetAt !== undefined && sunsetAt < deprecatedAt) {
    throw new RangeError(
      `${generation}'s sunset (${new Date(sunsetAt).toISOString()}) is before its deprecation (${new Date(deprecatedAt).toISOString()})`,
    );
  }
  for (const window of plan.brownouts ?? []) {
    if (!(window.end > window.start))
      throw new RangeError(`a ${generation} brownout must end after it starts (${window.start} to ${window.end})`);
  }
  return {
    deprecatedAt,
    sunsetAt,
    brownouts: plan.brownouts ?? [],
    brownoutExempt: new Set((plan.brownoutExempt ?? []).map((org) => org.toLowerCase())),
    afterSunset: plan.afterSunset ?? (generation === 'v1' ? 'refuse' : 'serve'),
  };
}

/** `Deprecation`, `Sunset` and the `Link` of each date that is set; none without dates. */
export function deprecationHeaders(
  plan: Pick<GenerationRetirement, 'deprecatedAt' | 'sunsetAt'>,
  migrationUrl: string,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const links: string[] = [];
  if (plan.deprecatedAt !== undefined) {
    headers.deprecation = structuredDate(plan.deprecatedAt);
    links.push(`<${migrationUrl}>; rel="deprecation"; type="text/html"`);
  }
  if (plan.sunsetAt !== undefined) {
    headers.sunset = imfFixdate(plan.sunsetAt);
    links.push(`<${migrationUrl}>; rel="sunset"; type="text/html"`);
  }
  if (links.length > 0) headers.link = links.join(', ');
  return headers;
}

/**
 * A guide's URL as a `Link` target: an absolute URL in its parsed form (a `>` or a space in the
 * text would end the target early), or a root-relative path, normalised the same way.
 */
export function linkTarget(url: string): string {
  if (URL.canParse(url)) return new URL(url).href;
  if (url.startsWith('/') && !url.startsWith('//')) {
    const parsed = new URL(url, 'http://gateway.invalid');
    return `${parsed.pathname}${parsed.search}${parsed.hash}`;
  }
  throw new RangeError(`the migration guide URL is neither an absolute URL nor a path from the root: ${url}`);
}

export class GenerationLifecycle implements LegacyReplyOptions {
  readonly deprecationHeaders: Readonly<Record<LegacyGeneration, Readonly<Record<string, string>>>>;
  /** v1's guide (the one its 410s name); `migrationUrls` has each generation's. */
  readonly migrationUrl: string;
  readonly migrationUrls: Readonly<Record<LegacyGeneration, string>>;
  /** Each generation's plan, as refusal() and the headers apply it (and the migration schedule shows it). */
  readonly plans: Readonly<Record<LegacyGeneration, ResolvedRetirement>>;
  /** The clock every decision reads: ms since the epoch. */
  readonly now: () => number;

  constructor(options: GenerationLifecycleOptions = {}) {
    this.migrationUrls = {
      v1: linkTarget(options.migrationUrl ?? DEFAULT_MIGRATION_URL),
      v2: linkTarget(options.v2MigrationUrl ?? DEFAULT_V2_MIGRATION_URL),
    };
    this.migrationUrl = this.migrationUrls.v1;
    this.plans = { v1: resolve('v1', options.v1), v2: resolve('v2', options.v2) };
    this.deprecationHeaders = Object.fromEntries(
      LEGACY_GENERATIONS.map((generation) => [
        generation,
        Object.freeze(deprecationHeaders(this.plans[generation], this.migrationUrls[generation])),
      ]),
    ) as Record<LegacyGeneration, Readonly<Record<string, string>>>;
    this.now = options.now ?? Date.now;
  }

  /** The refusal a request of `orgId` (its key's org) gets now, or null when it is served. */
  refusal(generation: LegacyGeneration, orgId: string): GenerationRetired | null {
    const plan = this.plans[generation];
    const now = this.now();
    if (plan.sunsetAt !== undefined && now >= plan.sunsetAt) {
      if (plan.afterSunset === 'serve') return null;
      return new GenerationRetired(
        'sunset',
        generation,
        `${generation} was retired on ${instantText(plan.sunsetAt)} and no longer serves requests. Migrate to a supported version: ${this.migrationUrls[generation]}`,
      );
    }
    const window = plan.brownouts.find((brownout) => now >= brownout.start && now < brownout.end);
    if (window === undefined || plan.brownoutExempt.has(orgId.toLowerCase())) return null;
    const retiring =
      plan.sunsetAt === undefined ? '' : `, a rehearsal of its retirement on ${instantText(plan.sunsetAt)}`;
    return new GenerationRetired(
      'brownout',
      generation,
      `${generation} is unavailable until ${instantText(window.end)} for a scheduled brownout${retiring}. Migrate before then: ${this.migrationUrls[generation]}`,
    );
  }
}

/** The lifecycle as configured (FXGATE_MIGRATION_URL, FXGATE_V2_MIGRATION_URL, FXGATE_V1_*, FXGATE_V2_*); config.ts has validated every value. */
export function lifecycleOptionsFromConfig(
  config: Pick<
    Config,
    | 'FXGATE_MIGRATION_URL'
    | 'FXGATE_V2_MIGRATION_URL'
    | 'FXGATE_V1_DEPRECATED_AT'
    | 'FXGATE_V1_SUNSET_AT'
    | 'FXGATE_V1_AFTER_SUNSET'
    | 'FXGATE_V1_BROWNOUTS'
    | 'FXGATE_V1_BROWNOUT_EXEMPT'
    | 'FXGATE_V2_DEPRECATED_AT'
    | 'FXGATE_V2_SUNSET_AT'
  >,
): GenerationLifecycleOptions {
  const instant = (text: string | undefined) => (text === undefined ? undefined : parseInstant(text));
  return {
    migrationUrl: config.FXGATE_MIGRATION_URL,
    v2MigrationUrl: config.FXGATE_V2_MIGRATION_URL,
    v1: {
      deprecatedAt: instant(config.FXGATE_V1_DEPRECATED_AT),
      sunsetAt: instant(config.FXGATE_V1_SUNSET_AT),
      afterSunset: config.FXGATE_V1_AFTER_SUNSET,
      brownouts: config.FXGATE_V1_BROWNOUTS,
      brownoutExempt: config.FXGATE_V1_BROWNOUT_EXEMPT,
    },
    // v2's dates announce only; there is no setting to refuse v2 yet.
    v2: {
      deprecatedAt: instant(config.FXGATE_V2_DEPRECATED_AT),
      sunsetAt: instant(config.FXGATE_V2_SUNSET_AT),
      afterSunset: 'serve',
    },
  };
}
