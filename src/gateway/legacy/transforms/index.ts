/**
 * The transforms the endpoint tables name, registered by those names. The gateway hands
 * `Object.keys` of each side to the table validator at start-up, so a name a table uses and
 * nobody registered stops the gateway before it serves anything.
 */
import { REQUEST_TRANSFORMS } from './request-transforms.js';
import { RESPONSE_TRANSFORMS } from './response-transforms.js';
import type { TransformSet } from './transform-types.js';

export const LEGACY_TRANSFORMS: TransformSet = Object.freeze({ request: REQUEST_TRANSFORMS, response: RESPONSE_TRANSFORMS });
