/**
 * The wire types v3 records are written in, as zod schemas (docs/contract.md#types): prefixed
 * ids, decimal strings, currency codes, timestamps, metadata. The record schemas beside each
 * record builder are made of these, and the v3 OpenAPI document is generated from them
 * (src/core/openapi/). Part of the core's HTTP layer; imports only lib.
 */
import { z } from 'zod';

import { ID_PREFIXES, type IdKind } from '../lib/ids.js';
import { DECIMAL_PATTERN } from '../lib/money.js';

/** A v3 id of one kind: its prefix, `_`, and 32 lower-case hex (docs/contract.md#types-ids). */
export function v3Id(kind: IdKind) {
  return z
    .string()
    .regex(new RegExp(`^${ID_PREFIXES[kind]}_[0-9a-f]{32}$`))
    .meta({ description: `A ${ID_PREFIXES[kind]}_ id.` });
}

/** An amount or rate as v3 writes it: a decimal string, signed where a balance may be negative (docs/contract.md#types-amounts). */
export const decimalString = z
  .string()
  .regex(DECIMAL_PATTERN)
  .meta({ description: 'A decimal string, never a JSON number.', example: '100.00' });

/** A currency code (docs/contract.md#types-currencies). */
export const currencyCode = z
  .string()
  .regex(/^[A-Z]{3,5}$/)
  .meta({ description: 'A currency code.', example: 'USD' });

/** ISO 8601 UTC with milliseconds and `Z` (docs/contract.md#types-time). */
export const timestamp = z.iso.datetime().meta({ example: '2026-11-26T02:57:02.221Z' });

/** Client metadata as records echo it: `{}` when none (docs/contract.md#types-metadata). */
export const metadataRecord = z
  .record(z.string(), z.string())
  .meta({ description: 'The metadata the client sent, `{}` when none.' });

/** The success envelope of one record: `{"data": record}` (docs/contract.md#v3-responses). */
export function dataOf<T extends z.ZodType>(record: T) {
  return z.object({ data: record });
}

/** The success envelope of a bounded list: `{"data": [record, ...]}` (docs/contract.md#pagination-bounded). */
export function listOf<T extends z.ZodType>(record: T) {
  return z.object({ data: z.array(record) });
}
