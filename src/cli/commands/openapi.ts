/**
 * `fxgate openapi`: the committed snapshots of the OpenAPI documents, docs/openapi/v3.json,
 * v2.json and v1.json, checked (`--check`) or rewritten (`--write`, `npm run openapi`) from the
 * documents the code generates. A rewrite that would break clients of the committed document
 * (src/cli/breaking-changes.ts) is refused, naming each break, unless
 * `--accept-breaking` says it is on purpose. The v3 client's types (src/lib/client/v3-api.ts) are
 * generated from the v3 document and kept with them. Works on the checkout it runs from, whatever
 * the working folder (`--root` names another); writes only those files.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { coreV3Document } from '../../core/openapi/declared-operations.js';
import { loadLegacyMappings } from '../../gateway/legacy/declarations/mappings-loader.js';
import { buildLegacyDocument } from '../../gateway/openapi/legacy-document.js';
import { CliError, EXIT_CODES } from '../../lib/errors/internal-errors.js';
import { type Generation, GENERATIONS, type OpenApiDocument, serializeDocument } from '../../lib/openapi/document.js';
import { type BreakingChange, breakingChanges, describeBreakingChange } from '../breaking-changes.js';
import { CLIENT_TYPES_PATH, clientTypesText } from '../client-types.js';
import type { CliRun } from '../io.js';
import { checkoutRoot, SNAPSHOT_DIRECTORY } from '../repository.js';

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

/** A file the command keeps: a snapshot, or the client's types. */
export type GeneratedFileState = Omit<SnapshotState, 'generation'>;

export function isStale(state: GeneratedFileState): boolean {
  return state.committed !== state.expected;
}

/** A file's text under `root`, null when it is not there. */
function readCommitted(root: string, path: string): Promise<string | null> {
  return readFile(join(root, path), 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
}

/** Each snapshot under `root` against the generated document (the documents generated now unless given). */
export async function snapshotStates(
  root: string,
  documents?: Readonly<Record<Generation, OpenApiDocument>>,
): Promise<SnapshotState[]> {
  const generated = documents ?? (await generateDocuments());
  return Promise.all(
    GENERATIONS.map(async (generation) => {
      const path = snapshotPath(generation);
      const committed = await readCommitted(root, path);
      const expected = serializeDocument(generated[generation]);
      const breaking =
        committed === null || committed === expected
          ? []
          : breakingChanges(JSON.parse(committed) as OpenApiDocument, generated[generation]);
      return { generation, path, expected, committed, breaking };
    }),
  );
}

/** The v3 client's types under `root` against those generated from the v3 document; they break nothing of their own. */
export async function clientTypesState(root: string, v3: OpenApiDocument): Promise<GeneratedFileState> {
  return {
    path: CLIENT_TYPES_PATH,
    expected: await clientTypesText(v3),
    committed: await readCommitted(root, CLIENT_TYPES_PATH),
    breaking: [],
  };
}

/** The snapshots and the client's types, as the command checks and writes them. */
export async function generatedFileStates(root: string): Promise<GeneratedFileState[]> {
  const documents = await generateDocuments();
  return [...(await snapshotStates(root, documents)), await clientTypesState(root, documents.v3)];
}

function report(state: GeneratedFileState, fresh: string): string[] {
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
  const states = await generatedFileStates(root);
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
  for (const state of stale) {
    await mkdir(dirname(join(root, state.path)), { recursive: true });
    await writeFile(join(root, state.path), state.expected);
  }
  for (const state of states) for (const line of report(state, 'written')) run.out(line);
}
