/**
 * A legacy operation compiled from its declarations at start-up: its query reader, body reader,
 * body builder and v3 calls, resolved once so that a request does no lookups by name. Every
 * route of the legacy layer is served from one of these.
 */
import { parseKeyName } from '../../../lib/auth/credential-vocabulary.js';
import { type BlockerDetector, compileBlockerDetector } from '../declarations/blockers.js';
import { type EndpointMapping, operationCall, type V3Call } from '../declarations/endpoint-mappings.js';
import type { LegacyErrorTables } from '../declarations/error-tables.js';
import { type LegacyGeneration, type LegacyOperation, legacyRoutePath } from '../declarations/legacy-operations.js';
import type { LegacyMappings } from '../declarations/mappings-loader.js';
import type { LegacyPrincipal } from '../runtime/auth.js';
import { compileRequest, type ReadRequest, requestAmountPaths } from '../transforms/request-body.js';
import { type BuildBody, compileResponse } from '../transforms/response-body.js';
import { findV3Operation, type V3ListKind } from '../v3-contract/operations.js';
import { compileQuery, type ReadQuery } from './query.js';

export interface CompiledOperation<G extends LegacyGeneration> {
  readonly generation: G;
  readonly name: LegacyOperation<G>;
  /** The fastify route, e.g. `/v2/brokerage/:orgId/trade/reverse`. */
  readonly route: string;
  readonly mapping: EndpointMapping;
  readonly tables: LegacyErrorTables<G>;
  readonly write: boolean;
  readonly readQuery: (query: unknown) => ReadQuery;
  /** Null for a GET. */
  readonly readBody: ReadRequest | null;
  /** The body's amount fields, read from the JSON text. */
  readonly amountPaths: readonly string[];
  readonly buildBody: BuildBody;
  /** The operation's own v3 call, by name. */
  readonly first: readonly [string, V3Call];
  /** The reads after it, by name. */
  readonly reads: readonly (readonly [string, V3Call])[];
  /** What kind of v3 list the first call returns. */
  readonly listKind: V3ListKind;
  /** The caller's key id (legacy quotes carry it as userId). */
  readonly keyIdOf: (principal: LegacyPrincipal) => string;
  /** What of a request would break on the next generation (mappings/blockers.ts). */
  readonly blockers: BlockerDetector;
}

function keyIdOf(principal: LegacyPrincipal): string {
  const parts = parseKeyName(principal.keyName);
  // The authenticator only admits registered key names, so this is a gateway defect, not v3's.
  if (parts === null)
    throw new Error(`the legacy principal's key name is not org/{orgId}/apiKey/{keyId}: ${principal.keyName}`);
  return parts.keyId;
}

export function compileOperation<G extends LegacyGeneration>(
  mappings: LegacyMappings,
  generation: G,
  name: LegacyOperation<G>,
): CompiledOperation<G> {
  const table: Readonly<Record<string, EndpointMapping>> = mappings.endpoints[generation];
  const mapping = table[name]!;
  const first = operationCall(mapping);
  return {
    generation,
    name,
    route: legacyRoutePath(generation, name),
    mapping,
    tables: mappings.errors[generation] as LegacyErrorTables<G>,
    write: mapping.method === 'POST',
    readQuery: compileQuery(mapping, mappings.conventions, mappings.maps),
    readBody: mapping.request === null ? null : compileRequest(mapping.request),
    amountPaths: requestAmountPaths(mapping.request),
    buildBody: compileResponse(mapping.response, mappings.recordsOf[generation], mappings.maps, name),
    first,
    reads: Object.entries(mapping.v3).slice(1),
    listKind: findV3Operation(first[1].method, first[1].path)?.list ?? null,
    keyIdOf,
    blockers: compileBlockerDetector(mappings, generation, name),
  };
}
