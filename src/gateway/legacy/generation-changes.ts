/**
 * A legacy generation written as the changes from another (v1 from v2, in
 * `mappings/endpoints.v1.ts`): the format, its validator, and `applyGenerationChanges`, which
 * builds the full endpoint table the gateway serves. Part of the legacy layer's declarations.
 *
 * Where two generations agree, the older one is not written again: a newcomer reads what v1
 * lacks, each change with its source and reason, and the generated docs and changelog list the
 * same changes.
 */
import { z } from 'zod';

import type { LegacyGeneration } from './catalog.js';
import type { EndpointMapping, IdempotencyRule } from './endpoint-mappings.js';
import { describeIssues, LegacyMappingError } from './mapping-error.js';
import { provenanceShape } from './record-shapes.js';

const changeSchema = z.discriminatedUnion('kind', [
  /** The base generation has the operation; this one does not. */
  z.strictObject({ ...provenanceShape, kind: z.literal('operation-removed'), operation: z.string() }),
  /** Every operation of this method follows another idempotency rule (a lifetime is kept from the base). */
  z.strictObject({
    ...provenanceShape,
    kind: z.literal('idempotency'),
    method: z.enum(['GET', 'POST']),
    becomes: z.enum(['none', 'honoured-if-sent']),
  }),
  /** The operation's `data` fields are written at the top of the body too. */
  z.strictObject({ ...provenanceShape, kind: z.literal('data-also-at-root'), operation: z.string() }),
]);

const changesSchema = z.strictObject({
  /** The generation this one is written against. */
  base: z.enum(['v1', 'v2']),
  changes: z.array(changeSchema).readonly(),
});

export type GenerationChange = Readonly<z.infer<typeof changeSchema>>;
export type GenerationChanges = Readonly<z.infer<typeof changesSchema>>;

function idempotencyAfter(rule: IdempotencyRule, becomes: 'none' | 'honoured-if-sent'): IdempotencyRule {
  if (becomes === 'none') return { kind: 'none' };
  return { kind: 'honoured-if-sent', lifetimeSeconds: rule.kind === 'none' ? 0 : rule.lifetimeSeconds };
}

/**
 * The endpoint table of `generation`: the base table with the declared changes applied, in
 * order. Throws LegacyMappingError for a change that does not apply (an operation the base lacks,
 * a rule that leaves a key without a lifetime). The result is then validated like any table.
 */
export function applyGenerationChanges(
  generation: LegacyGeneration,
  baseTable: Readonly<Record<string, EndpointMapping>>,
  changes: unknown,
  tableName = `mappings/endpoints.${generation}`,
): {
  readonly base: LegacyGeneration;
  readonly table: Record<string, EndpointMapping>;
  readonly changes: readonly GenerationChange[];
} {
  const parsed = changesSchema.safeParse(changes);
  if (!parsed.success) throw new LegacyMappingError(tableName, describeIssues('', parsed.error.issues));
  const table: Record<string, EndpointMapping> = { ...baseTable };
  const problems: string[] = [];
  parsed.data.changes.forEach((change, index) => {
    const where = `changes[${index}]`;
    switch (change.kind) {
      case 'operation-removed':
      case 'data-also-at-root': {
        const mapping = table[change.operation];
        if (!mapping) {
          problems.push(`${where}.operation: ${parsed.data.base} has no operation ${change.operation}`);
          return;
        }
        if (change.kind === 'operation-removed') delete table[change.operation];
        else
          table[change.operation] = {
            ...mapping,
            response: { ...mapping.response, dataAlsoAtRoot: { source: change.source, reason: change.reason } },
          };
        return;
      }
      case 'idempotency':
        for (const [operation, mapping] of Object.entries(table)) {
          if (mapping.method !== change.method) continue;
          const rule = idempotencyAfter(mapping.idempotency, change.becomes);
          if (rule.kind === 'honoured-if-sent' && rule.lifetimeSeconds === 0)
            problems.push(`${where}: ${operation} has no lifetime to keep a key for`);
          table[operation] = { ...mapping, idempotency: rule };
        }
    }
  });
  if (problems.length > 0) throw new LegacyMappingError(tableName, problems);
  return { base: parsed.data.base, table, changes: parsed.data.changes };
}
