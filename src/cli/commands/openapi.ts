/**
 * `fxgate openapi`: the committed snapshots of the OpenAPI documents, docs/openapi/v3.json,
 * v2.json and v1.json, checked (`--check`) or rewritten (`--write`, `npm run openapi`) from the
 * documents the code generates. A rewrite that would break clients of the committed document
 * (src/lib/openapi/breaking-changes.ts) is refused, naming each break, unless
 * `--accept-breaking` says it is on purpose. Works on the checkout it runs from, whatever the
 * working folder (`--root` names another); writes only those files.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { coreV3Document } from '../../core/openapi/declared-operations.js';
import { loadLegacyMappings } from '../../gateway/legacy/mappings-loader.js';
import { buildLegacyDocument } from '../../gateway/openapi/legacy-document.js';
import { type BreakingChange, breakingChanges, describeBreakingChange } from '../../lib/openapi/breaking-changes.js';
import { type Generation, GENERATIONS, type OpenApiDocument, serializeDocument } from '../../lib/openapi/document.js';
import { SNAPSHOT_DIRECTORY } from '../definitions/openapi.js';
import { CliError, EXIT_CODES } from '../exit.js';
import type { CliRun } from '../io.js';
import { checkoutRoot } from '../repository.js';

export { SNAPSHOT_DIRECTORY };

export function snapshotPath(generation: Generation): string {
  return `${SNAPSHOT_DIRECTORY}/${generation}.json`;
}

/** The three documents as the code generates them now: v3 from the operations and the catalog, v2 and v1 from mappings/. */
export async function generateDocuments(): Promise<Readonly<Record<Generation, OpenApiDocument>>> {
  const mappings = await loadLegacyMappings();
  return { v3: coreV3Document(), v2: buildLegacyDocument(mappings, 'v2'), v1: buildLegacyDocument(mappings, 'v1') };
}

export interface SnapshotState {
  readonly generation: Generation;
  /** From the repository root. */
  readonly path: string;
  /** The bytes the snapshot should hold. */
  readonly expected: string;
  /** null when there is no snapshot yet. */
  readonly committed: string | null;
  /** What the generated document breaks for clients of the committed one; empty for a new snapshot. */
  readonly breaking: readonly BreakingChange[];
}

export function isStale(state: SnapshotState): boolean {
  return state.committed !== state.expected;
}

/** Each snapshot under `root` against the generated document. */
export async function snapshotStates(root: string): Promise<SnapshotState[]> {
  const documents = await generateDocuments();
  return Promise.all(
    GENERATIONS.map(async (generation) => {
      const path = snapshotPath(generation);
      const committed = await readFile(join(root, path), 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      const expected = serializeDocument(documents[generation]);
      const breaking =
        committed === null || committed === expected
          ? []
          : breakingChanges(JSON.parse(committed) as OpenApiDocument, documents[generation]);
      return { generation, path, expected, committed, breaking };
    }),
  );
}

function report(state: SnapshotState, fresh: string): string[] {
  return [
    `${state.path}: ${isStale(state) ? fresh : 'up to date'}`,
    ...state.breaking.map((change) => `  breaking: ${describeBreakingChange(change)}`),
  ];
}

/** `fxgate openapi --write | --check` (declared in definitions/openapi.ts). */
export async function runOpenApiCommand(
  run: CliRun,
  options: { write?: boolean; check?: boolean; acceptBreaking?: boolean; root?: string },
): Promise<void> {
  if (options.write === options.check) throw new CliError('give exactly one of --write and --check', EXIT_CODES.usage);
  if (options.acceptBreaking && !options.write)
    throw new CliError('--accept-breaking goes with --write', EXIT_CODES.usage);
  const root = options.root === undefined ? checkoutRoot('openapi') : run.path(options.root);
  const states = await snapshotStates(root);
  const stale = states.filter(isStale);
  const breaking = stale.filter((state) => state.breaking.length > 0);
  if (options.check) {
    for (const state of states) for (const line of report(state, 'stale')) run.out(line);
    if (stale.length > 0)
      throw new CliError(
        `${stale.map((state) => state.path).join(', ')} ${stale.length === 1 ? 'is' : 'are'} stale: run \`npm run openapi\``,
        EXIT_CODES.failure,
      );
    return;
  }
  if (breaking.length > 0 && !options.acceptBreaking) {
    for (const state of breaking) for (const line of report(state, 'stale')) run.out(line);
    throw new CliError(
      `the generated documents break clients of ${breaking.map((state) => state.path).join(', ')}; nothing written. If that is on purpose: npm run openapi -- --accept-breaking`,
      EXIT_CODES.failure,
    );
  }
  await mkdir(join(root, SNAPSHOT_DIRECTORY), { recursive: true });
  for (const state of stale) await writeFile(join(root, state.path), state.expected);
  for (const state of states) for (const line of report(state, 'written')) run.out(line);
}
