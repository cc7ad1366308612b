/**
 * The core's operations as declarations, without a database: what the v3 document, its
 * snapshot and its reference are generated from, offline. The factories read their context only
 * inside handlers, so they are given a context whose every member refuses to run. Part of the
 * core; builds the same list buildCoreApp serves (app.ts, operationsOn).
 */
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { DetachedContextError } from '../../lib/errors/internal-errors.js';
import type { DestinationPolicy } from '../../lib/net/destination-policy.js';
import type { OpenApiDocument } from '../../lib/openapi/document.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { operationsOn } from '../app.js';
import type { Operation } from '../http/operation.js';
import type { CursorCodec } from '../pagination/cursor-codec.js';
import type { TradingContext } from '../trading/trading-context.js';
import { buildV3Document } from './v3-document.js';

/** An object whose every member is a function that throws DetachedContextError. */
function detached<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_target, key) =>
      // Not a thenable: awaiting or returning it from an async function must not call `then`.
      key === 'then'
        ? undefined
        : () => {
            throw new DetachedContextError(`${name}.${String(key)}`);
          },
  });
}

/** The core's operations, declarations only: their handlers throw DetachedContextError. */
export function declaredCoreOperations(): Operation[] {
  return operationsOn(
    detached<TradingContext>('trading'),
    detached<CursorCodec>('cursors'),
    detached<SealingKeyring>('endpointSecrets'),
    detached<Record<Mode, DestinationPolicy>>('webhookDestinations'),
  );
}

let v3Document: OpenApiDocument | null = null;

/** The core's v3 document, built once per process (its zod components are registered once). */
export function coreV3Document(): OpenApiDocument {
  v3Document ??= buildV3Document(declaredCoreOperations());
  return v3Document;
}
