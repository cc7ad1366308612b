/**
 * A run of `fxgate diff generations` against a deployment: a check that the deployment and the
 * key can serve the run at all, then each legacy operation of each generation in turn (its
 * scenario's setup through v3, the legacy call, the v3 reads back, the comparison), one at a
 * time, so that nothing of one operation moves the balances or the credit another one reads.
 */
import { randomBytes } from 'node:crypto';

import {
  type AnswerVerdict,
  compareLegacyAnswer,
  type FieldVerdict,
  type ListCheck,
  type ReadBack,
  type V3ListRead,
  type V3ReadBack,
  type V3Record,
} from '../../gateway/compare/generation-diff.js';
import { parseLegacyAnswer } from '../../gateway/compare/legacy-values.js';
import type { EndpointMapping, V3Call } from '../../gateway/legacy/declarations/endpoint-mappings.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
  type V2Operation,
} from '../../gateway/legacy/declarations/legacy-operations.js';
import { type LegacyMappings, loadLegacyMappings } from '../../gateway/legacy/declarations/mappings-loader.js';
import { findV3Operation, V3_RECORD_READS } from '../../gateway/legacy/v3-contract/operations.js';
import type { V3RecordKind } from '../../gateway/legacy/v3-contract/v3-records.js';
import { parseKeyName } from '../../lib/auth/credential-vocabulary.js';
import { CliError, DeploymentError, EXIT_CODES, ScenarioError } from '../../lib/errors/internal-errors.js';
import { messageOf, usageError } from '../exit.js';
import { type Answer, answerSummary, Deployment, type DeploymentOptions } from './deployment.js';
import { Fixtures, type LegacyCall, SCENARIOS, type V3Setup } from './scenarios.js';

export type OperationResult = 'agrees' | 'differs' | 'error';

export interface OperationReport {
  readonly generation: LegacyGeneration;
  readonly operation: string;
  readonly result: OperationResult;
  readonly fieldsCompared: number;
  readonly fieldsDeclared: number;
  readonly durationMs: number;
  /** The legacy request sent. */
  readonly request?: { readonly method: string; readonly path: string };
  /** Why the operation could not be compared (its setup, or the legacy call, failed). */
  readonly error?: string;
  readonly fields: readonly FieldVerdict[];
  readonly lists: readonly ListCheck[];
}

export interface DiffReport {
  readonly url: string;
  readonly orgId: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly agrees: boolean;
  readonly operations: readonly OperationReport[];
}

export interface RunOptions extends DeploymentOptions {
  /** Operation names to run (every one when absent). */
  readonly only?: readonly string[];
  /** The declarations to judge by; those of this build by default. */
  readonly mappings?: LegacyMappings;
  /** Told of each operation as it ends. */
  readonly onOperation?: (report: OperationReport) => void;
}

/** Every operation name of every generation, in order. */
export const ALL_OPERATIONS: readonly string[] = [
  ...new Set(LEGACY_GENERATIONS.flatMap((generation) => LEGACY_OPERATIONS[generation])),
];

/** The scopes every scenario together needs. */
export const REQUIRED_SCOPES = ['view', 'trade', 'withdraw'] as const;

const LIST_PAGE = 100;
/** The most v3 list pages read to check one legacy page. */
const MAX_LIST_PAGES = 10;

function pathWithQuery(call: V3Call): string {
  const query = new URLSearchParams(call.query ?? {}).toString();
  return query === '' ? call.path : `${call.path}?${query}`;
}

function parseJson(answer: Answer): Record<string, unknown> | null {
  try {
    const body = JSON.parse(answer.text) as unknown;
    return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The scenarios' v3: signed calls that must answer 200. */
function v3Setup(deployment: Deployment): V3Setup {
  const expectOk = (method: string, path: string, answer: Answer): Record<string, unknown> => {
    const body = answer.status === 200 ? parseJson(answer) : null;
    if (body === null) throw new ScenarioError(`setup: v3 ${method} ${path} answered ${answerSummary(answer)}`);
    return body;
  };
  return {
    read: async (path) => expectOk('GET', path, await deployment.v3('GET', path)),
    write: async (path, body) => {
      const data = expectOk('POST', path, await deployment.v3('POST', path, body === undefined ? {} : { body })).data;
      if (data === null || typeof data !== 'object')
        throw new ScenarioError(`setup: v3 POST ${path} answered no record`);
      return data as Record<string, unknown>;
    },
  };
}

/** The comparison's reads of v3, each sent once per operation. */
class V3ReadsOverHttp implements V3ReadBack {
  private readonly answers = new Map<string, Promise<ReadBack<V3Record>>>();

  constructor(private readonly deployment: Deployment) {}

  private get(path: string): Promise<ReadBack<V3Record>> {
    let answer = this.answers.get(path);
    if (!answer) {
      answer = this.deployment.v3('GET', path).then(
        (response): ReadBack<V3Record> => {
          const body = response.status === 200 ? parseJson(response) : null;
          return body === null
            ? { ok: false, problem: `v3 GET ${path} answered ${answerSummary(response)}` }
            : { ok: true, value: body };
        },
        (error: unknown): ReadBack<V3Record> => ({ ok: false, problem: messageOf(error) }),
      );
      this.answers.set(path, answer);
    }
    return answer;
  }

  async record(kind: V3RecordKind, key: string): Promise<ReadBack<V3Record>> {
    const read = V3_RECORD_READS[kind];
    if (read === null) return { ok: false, problem: `no v3 read serves the v3 ${kind} record` };
    const answer = await this.get(read.read === 'one' ? read.path.replace(':id', encodeURIComponent(key)) : read.path);
    if (!answer.ok) return answer;
    const data = answer.value.data;
    if (read.read === 'one')
      return data !== null && typeof data === 'object' && !Array.isArray(data)
        ? { ok: true, value: data as V3Record }
        : { ok: false, problem: `v3 GET ${read.path} answered no record` };
    const found = Array.isArray(data)
      ? (data as V3Record[]).find((record) => String(record[read.key]) === key)
      : undefined;
    return found
      ? { ok: true, value: found }
      : { ok: false, problem: `v3 GET ${read.path} has no ${kind} with ${read.key} ${key}` };
  }

  call(call: V3Call): Promise<ReadBack<V3Record>> {
    return this.get(pathWithQuery(call));
  }

  async list(call: V3Call, count: number): Promise<ReadBack<V3ListRead>> {
    const base = pathWithQuery(call);
    if (findV3Operation(call.method, call.path)?.list !== 'cursor') {
      const answer = await this.get(base);
      if (!answer.ok) return answer;
      return Array.isArray(answer.value.data)
        ? { ok: true, value: { records: answer.value.data as V3Record[], complete: true } }
        : { ok: false, problem: `v3 GET ${base} answered no list` };
    }
    const records: V3Record[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < MAX_LIST_PAGES; pages += 1) {
      const path = `${base}${base.includes('?') ? '&' : '?'}limit=${LIST_PAGE}${cursor === null ? '' : `&startingAfter=${encodeURIComponent(cursor)}`}`;
      const answer = await this.get(path);
      if (!answer.ok) return answer;
      const { data, pagination } = answer.value as {
        data?: unknown;
        pagination?: { hasNext?: unknown; nextCursor?: unknown };
      };
      if (!Array.isArray(data)) return { ok: false, problem: `v3 GET ${path} answered no list` };
      records.push(...(data as V3Record[]));
      if (pagination?.hasNext !== true || typeof pagination.nextCursor !== 'string')
        return { ok: true, value: { records, complete: true } };
      if (records.length >= count) return { ok: true, value: { records, complete: false } };
      cursor = pagination.nextCursor;
    }
    return { ok: true, value: { records, complete: false } };
  }
}

/**
 * Refuses a run that cannot work before it changes anything: the URL must answer, serve /v3 to
 * this key in sandbox mode with the scopes the scenarios need, and serve /v1 and /v2.
 */
async function preflight(deployment: Deployment): Promise<void> {
  const where = deployment.origin;
  let pairs: Answer;
  try {
    pairs = await deployment.v3('GET', '/v3/fx/pairs');
  } catch (error) {
    throw new CliError(messageOf(error), EXIT_CODES.failure, { cause: error });
  }
  const code = (answer: Answer) => (parseJson(answer)?.error as { code?: string } | undefined)?.code;
  if (pairs.status === 401)
    throw usageError(
      `${where} does not know this key (${answerSummary(pairs)}): use a key file of this deployment (\`fxgate all\` prints the path of its sandbox key)`,
    );
  if (code(pairs) === 'AUTH_API_KEY_SANDBOX_REQUIRED')
    throw usageError(
      `${where} registers this key as a live key: the run creates trades and withdrawals, so it needs a sandbox key`,
    );
  if (pairs.status !== 200)
    throw new CliError(
      `${where} does not serve v3 (GET /v3/fx/pairs answered ${answerSummary(pairs)}): give the URL of \`fxgate all\` or of a gateway in front of v3`,
    );
  // Invalid bodies: the scope is checked before the body, so these prove the scopes and change nothing.
  for (const [scope, path] of [
    ['trade', '/v3/fx/quotes'],
    ['withdraw', '/v3/fx/withdrawals'],
  ] as const) {
    const probe = await deployment.v3('POST', path, { body: {} });
    if (code(probe) === 'AUTH_INSUFFICIENT_SCOPE')
      throw usageError(
        `${where} does not give this key the ${scope} scope: make a key with \`fxgate keys create --org ORG --mode sandbox --scopes view,trade,withdraw\``,
      );
  }
  const legacy = await deployment.legacy('v2', 'GET', 'available_markets');
  if (legacy.status === 200) return;
  if (legacy.status === 501)
    throw new CliError(
      `${where} serves v3 but not v1 and v2 (${answerSummary(legacy)}): run the gateway with its legacy side (\`fxgate all\`, or \`fxgate gateway\` with a key registry)`,
    );
  if (code(legacy) === 'ROUTE_NOT_FOUND')
    throw new CliError(
      `${where} does not serve /v1 and /v2 (${answerSummary(legacy)}): give the gateway's URL (\`fxgate all\` or \`fxgate gateway\`), not the core's`,
    );
  throw new CliError(
    `${where} refused a v2 read (GET /v2/brokerage/${deployment.orgId}/available_markets answered ${answerSummary(legacy)})`,
  );
}

async function runOperation(
  deployment: Deployment,
  mappings: LegacyMappings,
  fixtures: Fixtures,
  generation: LegacyGeneration,
  operation: string,
  keyId: string,
): Promise<OperationReport> {
  const started = performance.now();
  const mapping = (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
  let call: LegacyCall | null = null;
  const report = (
    result: OperationResult,
    rest: Partial<OperationReport> & { fields?: readonly FieldVerdict[]; lists?: readonly ListCheck[] },
  ): OperationReport => ({
    generation,
    operation,
    result,
    fieldsCompared: 0,
    fieldsDeclared: 0,
    durationMs: Math.round(performance.now() - started),
    ...(call
      ? { request: { method: call.method, path: `/${generation}/brokerage/${deployment.orgId}/${call.path}` } }
      : {}),
    fields: [],
    lists: [],
    ...rest,
  });
  try {
    call = await SCENARIOS[operation as V2Operation]!(fixtures, generation);
    const answer = await deployment.legacy(generation, call.method, call.path, {
      body: call.body,
      idempotencyKey: call.idempotencyKey,
    });
    if (answer.status !== 200)
      return report('error', { error: `the legacy ${call.method} answered ${answerSummary(answer)}` });
    let body: unknown;
    try {
      body = parseLegacyAnswer(answer.text);
    } catch (error) {
      return report('error', { error: `the legacy answer is not JSON: ${messageOf(error)}` });
    }
    const verdict: AnswerVerdict = await compareLegacyAnswer(
      {
        operation,
        mapping,
        records: mappings.recordsOf[generation],
        maps: mappings.maps,
        body,
        context: { orgId: deployment.orgId, keyId },
        ...(call.page ? { page: call.page } : {}),
      },
      new V3ReadsOverHttp(deployment),
    );
    return report(verdict.agrees ? 'agrees' : 'differs', {
      fieldsCompared: verdict.compared,
      fieldsDeclared: verdict.declared,
      fields: verdict.fields,
      lists: verdict.lists,
    });
  } catch (error) {
    if (error instanceof ScenarioError || error instanceof DeploymentError)
      return report('error', { error: error.message });
    throw error;
  }
}

/** Checks the names of `--only` against the operations; a name no generation has is a usage error. */
export function selectOperations(only: readonly string[] | undefined): ReadonlySet<string> {
  if (only === undefined) return new Set(ALL_OPERATIONS);
  const unknown = only.filter((name) => !ALL_OPERATIONS.includes(name));
  if (unknown.length > 0)
    throw usageError(
      `--only: no legacy operation named ${unknown.join(', ')} (the operations: ${ALL_OPERATIONS.join(', ')})`,
    );
  if (only.length === 0) throw usageError('--only: name at least one operation');
  return new Set(only);
}

export async function runGenerationDiff(options: RunOptions): Promise<DiffReport> {
  const selected = selectOperations(options.only);
  const keyId = parseKeyName(options.key.file.name)?.keyId;
  if (keyId === undefined)
    throw usageError(`the key file's name ${options.key.file.name} is not org/{orgId}/apiKey/{keyId}`);
  const mappings = options.mappings ?? (await loadLegacyMappings());
  const startedAt = new Date();
  const started = performance.now();
  const deployment = new Deployment(options);
  try {
    await preflight(deployment);
    const fixtures = new Fixtures(v3Setup(deployment), randomBytes(4).toString('hex'));
    const operations: OperationReport[] = [];
    for (const generation of LEGACY_GENERATIONS) {
      for (const operation of LEGACY_OPERATIONS[generation]) {
        if (!selected.has(operation)) continue;
        const report = await runOperation(deployment, mappings, fixtures, generation, operation, keyId);
        operations.push(report);
        options.onOperation?.(report);
      }
    }
    return {
      url: options.origin,
      orgId: deployment.orgId,
      startedAt: startedAt.toISOString(),
      durationMs: Math.round(performance.now() - started),
      agrees: operations.every((operation) => operation.result === 'agrees'),
      operations,
    };
  } finally {
    await deployment.close();
  }
}
