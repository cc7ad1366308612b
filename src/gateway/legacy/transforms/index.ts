/**
 * The transforms the endpoint tables name, registered by those names. The gateway hands their
 * names to the table validator at start-up (loadShippedMappings), so a name a table uses and
 * nobody registered stops the gateway before it serves anything.
 */
import { REQUEST_TRANSFORMS } from './request-transforms.js';
import { RESPONSE_TRANSFORMS } from './response-transforms.js';
import type { TransformSet } from './transform-types.js';
import { type LegacyMappings, loadLegacyMappings } from '../mappings-loader.js';

export const LEGACY_TRANSFORMS: TransformSet = Object.freeze({ request: REQUEST_TRANSFORMS, response: RESPONSE_TRANSFORMS });

/** The shipped tables of `mappings/`, validated against the shipped transforms. */
export function loadShippedMappings(): Promise<LegacyMappings> {
  return loadLegacyMappings({ request: Object.keys(LEGACY_TRANSFORMS.request), response: Object.keys(LEGACY_TRANSFORMS.response) });
}
