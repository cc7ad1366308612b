/**
 * For the tests of the legacy declarations' validators: a broken copy of a shipped table, and
 * the LegacyMappingError a validator throws for it.
 */
import { expect } from 'vitest';

import { LegacyMappingError } from '../../../src/lib/errors/internal-errors.js';

/**
 * A copy of `table` with `edits` applied: each key is a dotted path (operation names hold no
 * dot), each value the new value, or undefined to delete it. A JSON copy, not structuredClone:
 * the shipped tables share constants between entries (READ_KEY, the withdrawal body), and a
 * structured clone keeps them shared, so one edit would break several entries.
 */
export function edited(table: unknown, edits: Readonly<Record<string, unknown>>): unknown {
  const copy = JSON.parse(JSON.stringify(table)) as Record<string, unknown>;
  for (const [path, value] of Object.entries(edits)) {
    const keys = path.split('.');
    const last = keys.pop()!;
    let node = copy;
    for (const key of keys) {
      const next = node[key];
      if (typeof next !== 'object' || next === null) throw new Error(`the table has no ${path}`);
      node = next as Record<string, unknown>;
    }
    if (value !== undefined) node[last] = value;
    else if (Object.hasOwn(node, last)) delete node[last];
    else throw new Error(`the table has no ${path} to delete`);
  }
  return copy;
}

/** The error `run` throws, which must be a LegacyMappingError. */
export function mappingError(run: () => unknown): LegacyMappingError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    return error as LegacyMappingError;
  }
  throw new Error('expected a LegacyMappingError');
}
