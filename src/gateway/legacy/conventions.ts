/**
 * The format of `mappings/conventions.ts`, the conventions every legacy operation shares (page
 * defaults, the mode header's values), and its validator. Part of the legacy layer's
 * declarations.
 */
import { z } from 'zod';
import type { Mode } from '../../lib/auth/credentials.js';
import { LegacyMappingError, describeIssues } from './mapping-error.js';
import { type Provenance, provenanceShape } from './record-shapes.js';

export interface LegacyConventions {
  readonly pagination: Provenance & {
    readonly page: { readonly default: number; readonly min: number };
    readonly limit: { readonly default: number; readonly min: number; readonly max: number };
  };
  /** `X-App-Mode` values (compared in upper case) -> the book the request works on. */
  readonly appModes: Provenance & { readonly values: Readonly<Record<string, Mode>>; readonly absent: Mode };
}

const count = z.number().int().positive();
const mode = z.enum(['sandbox', 'live']);

const conventionsSchema = z.strictObject({
  pagination: z
    .strictObject({ ...provenanceShape, page: z.strictObject({ default: count, min: count }), limit: z.strictObject({ default: count, min: count, max: count }) })
    .refine((pagination) => pagination.page.default >= pagination.page.min, 'page.default must be at least page.min')
    .refine((pagination) => pagination.limit.min <= pagination.limit.default && pagination.limit.default <= pagination.limit.max, 'limit.default must lie from limit.min to limit.max'),
  appModes: z.strictObject({
    ...provenanceShape,
    values: z.record(z.string().regex(/^[A-Z]+$/, 'an upper-case word'), mode),
    absent: mode,
  }),
});

/** Validates the conventions as loaded (unknown input); throws LegacyMappingError listing every problem. */
export function validateConventions(value: unknown, tableName = 'mappings/conventions'): LegacyConventions {
  const parsed = conventionsSchema.safeParse(value);
  if (!parsed.success) throw new LegacyMappingError(tableName, describeIssues('', parsed.error.issues));
  return parsed.data;
}

/** The mode a legacy request declares, or null for a value the conventions do not know. */
export function declaredMode(conventions: LegacyConventions, header: string | readonly string[] | undefined): Mode | null {
  if (header === undefined) return conventions.appModes.absent;
  if (typeof header !== 'string') return null;
  return conventions.appModes.values[header.toUpperCase()] ?? null;
}
