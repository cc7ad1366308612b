/**
 * The shadow mode: the gateway beside the real legacy service, while a platform team moves
 * integrators onto it.
 *
 * Who answers a client is decided per org. With `serve: 'gateway'` every org gets the
 * translation. With `serve: 'legacy'` every org but the `cutoverOrgs` gets the legacy service's
 * answer: all its requests, reads and writes, are relayed to it as they came (legacy-service.ts),
 * and the gateway translates nothing of them but the reads it compares. A write is never sent
 * to both, and never mirrored: a second write would move money twice.
 *
 * Reads are compared, a `sample` of them: once the client has its answer, the other side is
 * asked (the legacy service with the client's request as it came, or the gateway's own
 * translation of it) and the two answers compared field by field (../compare/answer-diff.ts). Nothing of it
 * runs before the client's answer is written, and nothing of it can fail that answer: a legacy
 * service that is down, slow or answering garbage costs a "not compared". At most `maxInFlight`
 * comparisons run at once; a read sampled beyond that is counted as dropped.
 *
 * Noise, after Diffy's primary/secondary idea turned onto the candidate: the client's token
 * cannot be replayed to the legacy service, so when a comparison finds differences the gateway
 * translates the request a second time, and the fields that differ between its own two
 * translations are noise, counted apart and never as differences. The fields mappings/
 * declares volatile (conventions.ts, `shadow.volatile`) are noise too. A read whose comparison
 * finds nothing costs one translation, as without shadow mode.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

import { DEFAULT_SHADOW_SAMPLE } from '../../lib/config.js';
import type { Queryable } from '../../lib/db/database.js';
import { DestinationRefusedError } from '../../lib/errors/internal-errors.js';
import { type OutboundAllowance } from '../../lib/net/destination-policy.js';
import { type AnswerText, compareAnswers, differingPaths } from '../compare/answer-diff.js';
import { type LegacyFieldIndex, legacyFieldIndex } from '../compare/legacy-fields.js';
import { type ShadowVolatileField, volatilePathsOf } from '../legacy/declarations/conventions.js';
import type { EndpointMapping } from '../legacy/declarations/endpoint-mappings.js';
import { LEGACY_GENERATIONS, type LegacyGeneration } from '../legacy/declarations/legacy-operations.js';
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import type { LegacyAnswer } from '../legacy/pipeline/answer.js';
import type { LegacyTranslation, ShadowObserver } from '../legacy/pipeline/operation-handler.js';
import type { LegacyRouteContext } from '../legacy/routes.js';
import {
  cameThroughGateway,
  type LegacyAnswerBytes,
  LegacyService,
  type LegacyServiceOptions,
} from './legacy-service.js';
import { ShadowRecorder, type ShadowRecorderOptions } from './shadow-recorder.js';

export type ShadowServe = 'gateway' | 'legacy';

export interface ShadowOptions {
  /** The legacy v1/v2 service's base URL (FXGATE_SHADOW_URL). */
  readonly legacyUrl: string;
  /** The share of reads compared, 0 to 1 (FXGATE_SHADOW_SAMPLE). */
  readonly sample?: number;
  /** Whose answer clients get (FXGATE_SHADOW_SERVE). */
  readonly serve?: ShadowServe;
  /** With serve 'legacy': the orgs the gateway serves all the same (FXGATE_CUTOVER_ORGS). */
  readonly cutoverOrgs?: readonly string[];
  /** Comparisons running at once; a sampled read beyond it is dropped (counted). */
  readonly maxInFlight?: number;
  /** The most a mirrored read may wait for the legacy service's whole answer. */
  readonly timeoutMs?: number;
  /** How often the counts are written to the database. */
  readonly flushIntervalMs?: number;
  /** Examples kept per differing field. */
  readonly examplesPerField?: number;
  /** The volatile fields; the declaration of mappings/conventions.ts unless given. */
  readonly volatile?: readonly ShadowVolatileField[];
  /** Uniform in [0, 1), for sampling; Math.random unless given. */
  readonly random?: () => number;
  /** The networks the legacy service may be in besides public and loopback addresses (FXGATE_WEBHOOK_ALLOWED_NETWORKS). */
  readonly outbound?: OutboundAllowance;
}

export const SHADOW_DEFAULTS = {
  sample: DEFAULT_SHADOW_SAMPLE,
  serve: 'gateway' as ShadowServe,
  cutoverOrgs: [] as readonly string[],
  maxInFlight: 64,
  timeoutMs: 5_000,
  flushIntervalMs: 1_000,
  examplesPerField: 5,
} as const;

/** Who answers whom, as shadow mode applies it (and the migration schedule shows it): every default filled in. */
export interface ShadowSettings {
  readonly legacyUrl: string;
  readonly sample: number;
  readonly serve: ShadowServe;
  /** Lower case, each once. */
  readonly cutoverOrgs: readonly string[];
}

/** The options' who-answers-whom with the defaults filled in; the one reading of them the shadow mode and the schedule share. */
export function shadowSettings(options: ShadowOptions): ShadowSettings {
  const sample = options.sample ?? SHADOW_DEFAULTS.sample;
  if (!(sample >= 0 && sample <= 1)) throw new RangeError(`the shadow sample must be from 0 to 1, got ${sample}`);
  return {
    legacyUrl: options.legacyUrl,
    sample,
    serve: options.serve ?? SHADOW_DEFAULTS.serve,
    cutoverOrgs: [...new Set((options.cutoverOrgs ?? SHADOW_DEFAULTS.cutoverOrgs).map((org) => org.toLowerCase()))],
  };
}

/** A legacy operation as the comparison sees it: its body's typed paths and its volatile ones. */
interface ComparedOperation {
  readonly generation: LegacyGeneration;
  readonly name: string;
  readonly index: LegacyFieldIndex;
  readonly volatile: ReadonlySet<string>;
}

export interface ShadowModeDependencies {
  readonly mappings: LegacyMappings;
  /** Where the report is kept: the gateway's database. */
  readonly database: Queryable;
  readonly legacy: Omit<LegacyServiceOptions, 'url'>;
  /** The deadline of a relayed request, to the last byte of its answer. */
  readonly deadlineMs: number;
  readonly log: FastifyBaseLogger;
  /** Told of each count of the report as it is made (the metrics). */
  readonly onCount?: ShadowRecorderOptions['onCount'];
}

export class ShadowMode implements ShadowObserver {
  readonly serve: ShadowServe;
  readonly settings: ShadowSettings;
  private readonly sample: number;
  private readonly cutover: ReadonlySet<string>;
  private readonly maxInFlight: number;
  private readonly timeoutMs: number;
  private readonly random: () => number;
  private readonly operations = new Map<string, ComparedOperation>();
  private readonly legacy: LegacyService;
  readonly recorder: ShadowRecorder;
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    options: ShadowOptions,
    private readonly deps: ShadowModeDependencies,
  ) {
    const resolved = { ...SHADOW_DEFAULTS, ...options };
    this.settings = shadowSettings(options);
    if (!Number.isInteger(resolved.maxInFlight) || resolved.maxInFlight < 1)
      throw new RangeError(`the cap on mirrored reads must be a positive whole number, got ${resolved.maxInFlight}`);
    this.serve = this.settings.serve;
    this.sample = this.settings.sample;
    this.cutover = new Set(this.settings.cutoverOrgs);
    this.maxInFlight = resolved.maxInFlight;
    this.timeoutMs = resolved.timeoutMs;
    this.random = resolved.random ?? Math.random;
    const conventions =
      options.volatile === undefined
        ? deps.mappings.conventions
        : { ...deps.mappings.conventions, shadow: { volatile: options.volatile } };
    for (const generation of LEGACY_GENERATIONS) {
      const table: Readonly<Record<string, EndpointMapping>> = deps.mappings.endpoints[generation];
      for (const [name, mapping] of Object.entries(table)) {
        if (mapping.method !== 'GET') continue;
        const index = legacyFieldIndex(mapping, deps.mappings.recordsOf[generation]);
        this.operations.set(`${generation} ${name}`, {
          generation,
          name,
          index,
          volatile: volatilePathsOf(conventions, name, new Set(index.keys())),
        });
      }
    }
    this.legacy = new LegacyService({ ...deps.legacy, url: resolved.legacyUrl, outbound: resolved.outbound });
    this.recorder = new ShadowRecorder(deps.database, {
      flushIntervalMs: resolved.flushIntervalMs,
      examplesPerField: resolved.examplesPerField,
      onFlushError: (error) =>
        deps.log.warn({ err: error }, 'shadow report: writing the counts failed; kept for the next flush'),
      ...(deps.onCount === undefined ? {} : { onCount: deps.onCount }),
    });
  }

  /** Whether the legacy service answers this org's clients. */
  servedByLegacy(orgId: string): boolean {
    return this.serve === 'legacy' && !this.cutover.has(orgId.toLowerCase());
  }

  /** Whether this request goes to the legacy service: its org's, unless a gateway already sent it on (a loop). */
  relays(request: FastifyRequest, orgId: string): boolean {
    return this.servedByLegacy(orgId) && !cameThroughGateway(request.headers.via);
  }

  /** Comparisons running now. */
  get inFlight(): number {
    return this.running.size;
  }

  private sampled(): boolean {
    return !this.closed && this.sample > 0 && (this.sample >= 1 || this.random() < this.sample);
  }

  /** A slot for one more comparison, or the drop counted. */
  private admit(operation: ComparedOperation): boolean {
    if (this.running.size < this.maxInFlight) return true;
    this.recorder.dropped(operation);
    return false;
  }

  private run(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.deps.log.error({ err: error }, 'shadow comparison failed'));
    this.running.add(tracked);
    void tracked.finally(() => this.running.delete(tracked));
  }

  /** The gateway answered a read (it serves this org): ask the legacy service the same, and compare. */
  gatewayAnswered(
    operation: { readonly generation: LegacyGeneration; readonly name: string },
    request: FastifyRequest,
    translation: LegacyTranslation,
  ): void {
    const compared = this.operations.get(`${operation.generation} ${operation.name}`);
    // A HEAD is not mirrored as a GET: only the client's request as it came is sent; nor is one a gateway sent on.
    if (
      compared === undefined ||
      request.method !== 'GET' ||
      cameThroughGateway(request.headers.via) ||
      !this.sampled() ||
      !this.admit(compared)
    )
      return;
    this.run(
      this.compare(compared, this.legacy.mirror(request, this.timeoutMs).then(textOf), Promise.resolve(translation)),
    );
  }

  /**
   * Serves a request of an org the legacy service answers: relays it, and once the client has
   * the answer, compares a sampled read with the gateway's translation of it.
   */
  async relay(request: FastifyRequest, reply: FastifyReply, route: LegacyRouteContext): Promise<void> {
    const compared =
      route.translate !== null && route.operation !== null && request.method === 'GET'
        ? this.operations.get(`${route.generation} ${route.operation}`)
        : undefined;
    const sampled = compared !== undefined && this.sampled();
    const answer = await this.legacy.relay(request, reply, {
      deadlineMs: this.deps.deadlineMs,
      capture: sampled,
      onFailure: (failed, error, mayHaveReached) => {
        request.log.warn({ err: error }, 'legacy service: no answer to a relayed request');
        route.fail(
          failed,
          mayHaveReached && request.method !== 'GET' && request.method !== 'HEAD'
            ? 'INTERNAL_ERROR'
            : 'SERVICE_UNAVAILABLE',
        );
      },
    });
    if (!sampled || compared === undefined || route.translate === null) return;
    if (answer === null) {
      this.recorder.notCompared(compared);
      return;
    }
    if (!this.admit(compared)) return;
    this.run(this.compare(compared, Promise.resolve(textOf(answer)), route.translate(request)));
  }

  private async compare(
    operation: ComparedOperation,
    legacySide: Promise<AnswerText>,
    gatewaySide: Promise<LegacyTranslation>,
  ): Promise<void> {
    let legacy: AnswerText;
    let translation: LegacyTranslation;
    try {
      [legacy, translation] = await Promise.all([legacySide, gatewaySide]);
    } catch (error) {
      // A refused destination is the operator's to fix (FXGATE_SHADOW_URL, FXGATE_WEBHOOK_ALLOWED_NETWORKS): said louder.
      if (error instanceof DestinationRefusedError)
        this.deps.log.warn(
          { reason: error.reason, operation: operation.name, generation: operation.generation },
          'shadow: not compared: the legacy service is not a destination the policy allows',
        );
      else
        this.deps.log.debug(
          { err: error, operation: operation.name, generation: operation.generation },
          'shadow: not compared',
        );
      this.recorder.notCompared(operation);
      return;
    }
    const result = compareAnswers(operation.index, legacy, translation.answer);
    if (!result.comparable) {
      this.deps.log.debug(
        { reason: result.reason, operation: operation.name, generation: operation.generation },
        'shadow: not compared',
      );
      this.recorder.notCompared(operation);
      return;
    }
    const noise = new Set<string>();
    let differences = result.differences.filter((difference) => {
      if (!operation.volatile.has(difference.path)) return true;
      noise.add(difference.path);
      return false;
    });
    if (differences.length > 0 && translation.retranslate !== null) {
      const again = await translation.retranslate().then(
        (answer: LegacyAnswer) => answer,
        () => null,
      );
      const moving = again === null ? new Set<string>() : differingPaths(operation.index, translation.answer, again);
      differences = differences.filter((difference) => {
        if (!moving.has(difference.path)) return true;
        noise.add(difference.path);
        return false;
      });
    }
    this.recorder.compared(operation, differences, noise);
  }

  /** Writes the counts so far (the report reads the database). */
  flush(): Promise<void> {
    return this.recorder.flush();
  }

  /**
   * Stops sampling, lets the comparisons running finish (for up to the shadow timeout), writes
   * the counts, and closes the connections to the legacy service.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.running.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.timeoutMs);
        timer.unref();
      });
      await Promise.race([Promise.allSettled([...this.running]), bound]);
      clearTimeout(timer);
    }
    await this.recorder.close();
    await this.legacy.close();
  }
}

function textOf(answer: LegacyAnswerBytes): AnswerText {
  return { status: answer.status, body: answer.body.toString('utf8') };
}
