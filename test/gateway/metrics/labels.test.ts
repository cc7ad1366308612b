/**
 * The gateway metrics' label values from what a request carries: the declared v3 operation a
 * passthrough target names (never the target itself), the kind of an upstream failure, for the
 * legacy pipeline's typed errors and for the passthrough relay's undici errors, and each outcome
 * of a legacy idempotency key where the record store decides it.
 */
import { describe, expect, it } from 'vitest';

import { MemoryStore } from '../../../src/cli/store/memory-store.js';
import {
  LegacyIdempotency,
  type LegacyIdempotencyScope,
} from '../../../src/gateway/legacy/runtime/legacy-idempotency.js';
import { V3_OPERATIONS } from '../../../src/gateway/legacy/v3-contract/operations.js';
import { GatewayMetrics } from '../../../src/gateway/metrics/gateway-metrics.js';
import { v3OperationLabel, V3OperationMatcher } from '../../../src/gateway/metrics/v3-routes.js';
import { upstreamFailureKind } from '../../../src/gateway/upstream/upstream-failure.js';
import {
  StoreUnavailableError,
  UpstreamCredentialError,
  UpstreamDeadlineError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
  V3ContractError,
} from '../../../src/lib/errors/internal-errors.js';

const matcher = new V3OperationMatcher();
const label = (method: string, url: string): string | null => {
  const operation = matcher.match(method, url);
  return operation === null ? null : v3OperationLabel(operation);
};

describe('V3OperationMatcher', () => {
  it('names every declared operation from a concrete target, ids and queries included', () => {
    for (const operation of V3_OPERATIONS) {
      const concrete = operation.path.replaceAll(/:[A-Za-z]+/g, 'abc_0193a1b2c3d4e5f6');
      expect(label(operation.method, concrete), concrete).toBe(`${operation.method} ${operation.path}`);
      expect(label(operation.method, `${concrete}?limit=10&startingAfter=x%2Fy`)).toBe(
        `${operation.method} ${operation.path}`,
      );
    }
  });

  it('takes a HEAD as its GET', () => {
    expect(label('HEAD', '/v3/fx/trades/trd_1')).toBe('GET /v3/fx/trades/:id');
  });

  it('names nothing for another method, a longer or shorter path, a trailing slash or an empty segment', () => {
    expect(label('PUT', '/v3/fx/trades')).toBeNull();
    expect(label('GET', '/v3/fx/trades/trd_1/extra')).toBeNull();
    expect(label('GET', '/v3/fx')).toBeNull();
    expect(label('GET', '/v3/fx/trades/')).toBeNull();
    expect(label('GET', '/v3/fx/trades//')).toBeNull();
    expect(label('GET', '/v3/fx/tradesX')).toBeNull();
    expect(label('GET', '/v3')).toBeNull();
    expect(label('POST', '/v3/fx/sandbox/withdrawal-accounts/wac_1/verify')).toBe(
      'POST /v3/fx/sandbox/withdrawal-accounts/:id/verify',
    );
    expect(label('POST', '/v3/fx/sandbox/withdrawal-accounts/wac_1')).toBe(
      'POST /v3/fx/sandbox/withdrawal-accounts/:id',
    );
  });
});

describe('upstream failure kinds', () => {
  it('of the legacy pipeline: one per typed error, none for anything else', () => {
    expect(upstreamFailureKind(new UpstreamUnreachableError('x'))).toBe('unreachable');
    expect(upstreamFailureKind(new UpstreamTimeoutError('x'))).toBe('timeout');
    expect(upstreamFailureKind(new UpstreamTimeoutError('x', { deadline: true }))).toBe('deadline');
    expect(upstreamFailureKind(new UpstreamProtocolError('x', 502))).toBe('protocol');
    expect(upstreamFailureKind(new V3ContractError('trades', ['data: must be an array']))).toBe('contract_violation');
    expect(
      upstreamFailureKind(new UpstreamCredentialError('FXGATE_UPSTREAM_CREDENTIAL_MISSING', 'org', 'sandbox', 'x')),
    ).toBe('credential');
    expect(upstreamFailureKind(new Error('x'))).toBeNull();
  });

  it('of the passthrough: by undici code, and whether the request was written', () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    expect(upstreamFailureKind(new UpstreamDeadlineError(15_000), { requestWritten: true })).toBe('deadline');
    expect(upstreamFailureKind(new UpstreamDeadlineError(15_000), { requestWritten: false })).toBe('deadline');
    expect(upstreamFailureKind(coded('ECONNREFUSED'), { requestWritten: true })).toBe('unreachable');
    expect(upstreamFailureKind(coded('UND_ERR_SOCKET'), { requestWritten: false })).toBe('unreachable');
    expect(upstreamFailureKind(coded('UND_ERR_HEADERS_TIMEOUT'), { requestWritten: true })).toBe('timeout');
    expect(
      upstreamFailureKind(new Error('wrapped', { cause: coded('HPE_INVALID_CONSTANT') }), { requestWritten: true }),
    ).toBe('protocol');
    expect(upstreamFailureKind(coded('UND_ERR_SOCKET'), { requestWritten: true })).toBe('timeout');
  });
});

describe('idempotency outcomes', () => {
  it('counts each way a key is found, the store being down included, under its generation and operation', async () => {
    const metrics = new GatewayMetrics();
    const store = new MemoryStore();
    const idempotency = new LegacyIdempotency({ store, lockTtlMs: 30_000, metrics });
    const scope: LegacyIdempotencyScope = {
      generation: 'v2',
      orgId: 'org',
      mode: 'sandbox',
      operation: 'trade',
      key: 'k-1',
    };
    const first = await idempotency.begin(scope, 'fp-1');
    await expect(idempotency.begin(scope, 'fp-1')).rejects.toMatchObject({ code: 'IDEMPOTENCY_IN_FLIGHT' });
    await idempotency.complete(
      scope,
      first.kind === 'acquired' ? first.owner : '',
      { statusCode: 200, headers: {}, bodyBase64: '' },
      60,
    );
    expect((await idempotency.begin(scope, 'fp-1')).kind).toBe('replay');
    await expect(idempotency.begin(scope, 'fp-2')).rejects.toMatchObject({ code: 'IDEMPOTENCY_MISMATCH' });
    const down = Object.assign(new MemoryStore(), {
      idempotencyBegin: () => Promise.reject(new StoreUnavailableError('down')),
    });
    await expect(
      new LegacyIdempotency({ store: down, lockTtlMs: 30_000, metrics }).begin(scope, 'fp-1'),
    ).rejects.toMatchObject({ code: 'IDEMPOTENCY_UNAVAILABLE' });
    const counted = (await metrics.registry.getMetricsAsJSON()).find(
      (metric) => metric.name === 'fxgate_gateway_idempotency_total',
    )!.values;
    expect(Object.fromEntries(counted.map((value) => [value.labels.outcome, value.value]))).toEqual({
      new: 1,
      replay: 1,
      in_flight: 1,
      mismatch: 1,
      store_down: 1,
    });
    expect(new Set(counted.map((value) => `${value.labels.generation} ${value.labels.operation}`))).toEqual(
      new Set(['v2 trade']),
    );
    await store.close();
  });
});
