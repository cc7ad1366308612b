/**
 * The format of `mappings/conventions.ts`, the conventions every legacy operation shares (page
 * defaults, the mode header's values, the fields the shadow mode counts as volatile), and its
 * validators. Part of the legacy layer's declarations.
 */
import { z } from 'zod';

import type { Mode } from '../../../lib/auth/credential-vocabulary.js';
import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import type { EndpointMapping } from './endpoint-mappings.js';
import { LEGACY_GENERATIONS, LEGACY_OPERATIONS, type LegacyGeneration } from './legacy-operations.js';
import { parseDeclaration } from './mapping-error.js';
import { type Provenance, provenanceShape } from './record-shapes.js';

export interface LegacyConventions {
  readonly pagination: Provenance & {
    readonly page: { readonly default: number; readonly min: number };
    readonly limit: { readonly default: number; readonly min: number; readonly max: number };
  };
  /** `X-App-Mode` values (compared in upper case) -> the book the request works on. */
  readonly appModes: Provenance & { readonly values: Readonly<Record<string, Mode>>; readonly absent: Mode };
  readonly shadow: {
    /** Fields whose value moves between two answers to the same request: the shadow mode reports them as noise, never as differences. */
    readonly volatile: readonly ShadowVolatileField[];
  };
}

export interface ShadowVolatileField extends Provenance {
  /** Normalised paths of a success body (`data[].totalBalanceInUSD`; compare/legacy-fields.ts). */
  readonly paths: readonly string[];
  /** The operations they are volatile in; absent: every operation whose answer has the path. */
  readonly operations?: readonly string[];
}

const count = z.number().int().positive();
const mode = z.enum(['sandbox', 'live']);

const KNOWN_OPERATIONS: ReadonlySet<string> = new Set(
  LEGACY_GENERATIONS.flatMap((generation) => LEGACY_OPERATIONS[generation]),
);
/** Dotted names, `[]` after an array, `*` for a key chosen by data. */
const NORMALISED_PATH = /^[A-Za-z][A-Za-z0-9]*(\[\])?(\.([A-Za-z][A-Za-z0-9]*|\*)(\[\])?)*$/;

const volatileFieldSchema = z.strictObject({
  ...provenanceShape,
  paths: z.array(z.string().regex(NORMALISED_PATH, 'a normalised path such as data[].amount')).min(1),
  operations: z
    .array(z.string().refine((name) => KNOWN_OPERATIONS.has(name), 'not a legacy operation'))
    .min(1)
    .optional(),
});

const conventionsSchema = z.strictObject({
  pagination: z
    .strictObject({
      ...provenanceShape,
      page: z.strictObject({ default: count, min: count }),
      limit: z.strictObject({ default: count, min: count, max: count }),
    })
    .refine((pagination) => pagination.page.default >= pagination.page.min, 'page.default must be at least page.min')
    .refine(
      (pagination) =>
        pagination.limit.min <= pagination.limit.default && pagination.limit.default <= pagination.limit.max,
      'limit.default must lie from limit.min to limit.max',
    ),
  appModes: z.strictObject({
    ...provenanceShape,
    values: z.record(z.string().regex(/^[A-Z]+$/, 'an upper-case word'), mode),
    absent: mode,
  }),
  shadow: z.strictObject({
    volatile: z.array(volatileFieldSchema).refine((fields) => {
      const paths = fields.flatMap((field) => field.paths);
      return new Set(paths).size === paths.length;
    }, 'a path is declared twice'),
  }),
});

/** Validates the conventions as loaded (unknown input); throws LegacyMappingError listing every problem. */
export function validateConventions(value: unknown, tableName = 'mappings/conventions'): LegacyConventions {
  const parsed = parseDeclaration(conventionsSchema, value, tableName);
  return parsed;
}

/** The mode a legacy request declares, or null for a value the conventions do not know. */
export function declaredMode(
  conventions: LegacyConventions,
  header: string | readonly string[] | undefined,
): Mode | null {
  if (header === undefined) return conventions.appModes.absent;
  if (typeof header !== 'string') return null;
  return conventions.appModes.values[header.toUpperCase()] ?? null;
}

type EndpointTables = Readonly<Record<LegacyGeneration, Readonly<Record<string, EndpointMapping>>>>;

/**
 * The volatile paths of one operation's answer: the declared fields that name it (or name no
 * operation) and that its answer has.
 */
export function volatilePathsOf(
  conventions: LegacyConventions,
  operation: string,
  answerPaths: ReadonlySet<string>,
): ReadonlySet<string> {
  return new Set(
    conventions.shadow.volatile
      .filter((field) => field.operations === undefined || field.operations.includes(operation))
      .flatMap((field) => field.paths)
      .filter((path) => answerPaths.has(path)),
  );
}

/**
 * Checks the volatile declarations against the endpoint tables: each field must be a path of
 * every operation it names (in a generation that has the operation), and of at least one
 * operation when it names none, so that a typo never silences nothing. Throws LegacyMappingError.
 * `answerPaths` gives the normalised paths of an operation's success body (the comparison tools'
 * field index, compare/legacy-fields.ts), passed in because those tools read the declarations.
 */
export function validateShadowVolatile(
  conventions: LegacyConventions,
  endpoints: EndpointTables,
  answerPaths: (mapping: EndpointMapping) => Iterable<string>,
  tableName = 'mappings/conventions',
): void {
  const problems: string[] = [];
  const pathsOf = new Map<string, Set<string>>();
  for (const generation of LEGACY_GENERATIONS) {
    for (const [operation, mapping] of Object.entries(endpoints[generation])) {
      pathsOf.set(`${generation} ${operation}`, new Set(answerPaths(mapping)));
    }
  }
  conventions.shadow.volatile.forEach((field, position) => {
    const holders = [...pathsOf].filter(
      ([key]) => field.operations === undefined || field.operations.includes(key.split(' ')[1]!),
    );
    for (const path of field.paths) {
      const where = `shadow.volatile.${position}: ${path}`;
      if (field.operations === undefined) {
        if (!holders.some(([, paths]) => paths.has(path)))
          problems.push(`${where}: no operation's answer has this path`);
      } else {
        for (const [key, paths] of holders) if (!paths.has(path)) problems.push(`${where}: ${key} has no such path`);
      }
    }
  });
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
}
