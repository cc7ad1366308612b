import { execFile } from 'node:child_process';
/**
 * `fxgate openapi` and the committed snapshots: docs/openapi/*.json must be what the code
 * generates (a stale snapshot fails here, naming what the generated document breaks), and so
 * must the v3 client's types generated from v3.json (src/lib/client/v3-api.ts); the
 * command checks, writes, and refuses a breaking rewrite unless told it is on purpose. The
 * command runs through the CLI's runCli on copies in a temporary folder.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { oas31 } from 'zod-openapi';

import { describeBreakingChange } from '../../../src/cli/breaking-changes.js';
import { CLIENT_TYPES_PATH } from '../../../src/cli/client-types.js';
import { generatedFileStates, isStale, snapshotPath } from '../../../src/cli/commands/openapi.js';
import { GENERATIONS } from '../../../src/lib/openapi/document.js';
import { fxgate } from '../in-process-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Every file the command keeps, from the repository root, in the order it reports them. */
const KEPT_FILES = [...GENERATIONS.map(snapshotPath), CLIENT_TYPES_PATH];

describe('the committed OpenAPI snapshots and the client types', () => {
  it('are what the code generates; a stale snapshot names what the generated document breaks', async () => {
    const states = await generatedFileStates(ROOT);
    expect(states.map((state) => state.path)).toEqual(KEPT_FILES);
    for (const state of states) {
      const breaking = state.breaking.map((change) => `\n  ${describeBreakingChange(change)}`).join('');
      const advice =
        state.breaking.length === 0
          ? 'run `npm run openapi`'
          : `it breaks clients of the committed document:${breaking}\nif that is on purpose, run \`npm run openapi -- --accept-breaking\``;
      expect(isStale(state), `${state.path} is stale: ${advice}`).toBe(false);
    }
  });
});

describe('fxgate openapi', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fxgate-openapi-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const snapshot = (generation: string) => join(root, 'docs/openapi', `${generation}.json`);

  it('--check fails naming every missing snapshot; --write writes them; --check then passes', async () => {
    const missing = await fxgate(['openapi', '--check', '--root', root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      'docs/openapi/v3.json, docs/openapi/v2.json, docs/openapi/v1.json, src/lib/client/v3-api.ts are stale: run `npm run openapi`',
    );
    const written = await fxgate(['openapi', '--write', '--root', root]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe(KEPT_FILES.map((path) => `${path}: written\n`).join(''));
    for (const path of KEPT_FILES)
      expect(await readFile(join(root, path), 'utf8')).toBe(await readFile(join(ROOT, path), 'utf8'));
    const checked = await fxgate(['openapi', '--check', '--root', root]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain('docs/openapi/v3.json: up to date');
  });

  it('keeps the client types with the v3 document: a hand edit is stale, and --write puts back the generated text', async () => {
    const types = join(root, CLIENT_TYPES_PATH);
    const generated = await readFile(join(ROOT, CLIENT_TYPES_PATH), 'utf8');
    // The client makes the Idempotency-Key, so the types leave it optional where the document requires it.
    expect(generated).toContain('"Idempotency-Key"?: string;');
    expect(generated).not.toContain('"Idempotency-Key": string;');
    await writeFile(types, generated.replace('"Idempotency-Key"?: string;', '"Idempotency-Key": string;'));
    const checked = await fxgate(['openapi', '--check', '--root', root]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(`${CLIENT_TYPES_PATH}: stale`);
    expect(checked.stderr).toContain(`${CLIENT_TYPES_PATH} is stale: run \`npm run openapi\``);
    const written = await fxgate(['openapi', '--write', '--root', root]);
    expect(written.code, written.stderr).toBe(0);
    expect(await readFile(types, 'utf8')).toBe(generated);
  });

  it('rewrites a snapshot the code only adds to without being asked', async () => {
    // A committed document that lacked an optional body field: the generated one adds it, which breaks nobody.
    const committed = JSON.parse(await readFile(snapshot('v3'), 'utf8')) as oas31.OpenAPIObject;
    const body = (committed.paths!['/v3/fx/trades']!.post!.requestBody as oas31.RequestBodyObject).content[
      'application/json'
    ]!.schema as oas31.SchemaObject;
    delete body.properties!.clientReferenceId;
    delete (committed.components!.schemas!.Trade as oas31.SchemaObject).properties!.metadata;
    await writeFile(snapshot('v3'), JSON.stringify(committed));
    const written = await fxgate(['openapi', '--write', '--root', root]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).not.toContain('breaking');
    expect(await readFile(snapshot('v3'), 'utf8')).toBe(await readFile(join(ROOT, 'docs/openapi/v3.json'), 'utf8'));
  });

  it('refuses a rewrite that breaks clients, naming each break, until --accept-breaking', async () => {
    // A committed v2 document whose trade record had a field, and whose trades list had no required filter: the generated one lacks the first.
    const committed = JSON.parse(await readFile(snapshot('v2'), 'utf8')) as oas31.OpenAPIObject;
    const trade = committed.components!.schemas!.Trade as oas31.SchemaObject;
    trade.properties!.legacyOnly = { type: 'string' };
    trade.required = [...trade.required!, 'legacyOnly'];
    const text = JSON.stringify(committed);
    await writeFile(snapshot('v2'), text);

    const checked = await fxgate(['openapi', '--check', '--root', root]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain('docs/openapi/v2.json: stale');
    expect(checked.stdout).toContain(
      '  breaking: response-field-removed: GET /v2/brokerage/{orgId}/trades 200: data[].legacyOnly is no longer answered',
    );
    expect(checked.stdout).toContain(
      '  breaking: response-field-removed: GET /v2/brokerage/{orgId}/trade/{id} 200: data.legacyOnly is no longer answered',
    );

    const refused = await fxgate(['openapi', '--write', '--root', root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('the generated documents break clients of docs/openapi/v2.json; nothing written');
    expect(refused.stdout).toContain('breaking: response-field-removed');
    expect(await readFile(snapshot('v2'), 'utf8')).toBe(text);

    const accepted = await fxgate(['openapi', '--write', '--accept-breaking', '--root', root]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('docs/openapi/v2.json: written');
    expect(await readFile(snapshot('v2'), 'utf8')).toBe(await readFile(join(ROOT, 'docs/openapi/v2.json'), 'utf8'));
  });

  it('checks the checkout it runs from, whatever the working folder, and --root against the working folder', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fxgate-openapi-cwd-'));
    try {
      const checked = await fxgate(['openapi', '--check'], {}, { cwd: elsewhere });
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toBe(KEPT_FILES.map((path) => `${path}: up to date\n`).join(''));
      expect(checked.stderr).toBe('');
      // A relative --root is the run's folder's, not the test process's.
      const relative = await fxgate(['openapi', '--check', '--root', '.'], {}, { cwd: ROOT });
      expect(relative.code, relative.stderr).toBe(0);
      const empty = await fxgate(['openapi', '--check', '--root', '.'], {}, { cwd: elsewhere });
      expect(empty.code).toBe(1);
      expect(empty.stdout).not.toContain('ENOENT');
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('as a process started in another folder, checks the checkout it runs from: no ENOENT, every file up to date', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'fxgate-openapi-process-'));
    try {
      // tsx by its own path: the other folder has no node_modules to find it in.
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts'), 'openapi', '--check'],
        { cwd: elsewhere, env: { PATH: process.env.PATH } },
      );
      expect(stderr).toBe('');
      expect(stdout).not.toContain('stale');
      expect(stdout).toContain(': up to date');
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('takes exactly one of --write and --check, and --accept-breaking only with --write', async () => {
    expect((await fxgate(['openapi', '--root', root])).code).toBe(2);
    expect((await fxgate(['openapi', '--write', '--check', '--root', root])).code).toBe(2);
    const misplaced = await fxgate(['openapi', '--check', '--accept-breaking', '--root', root]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain('--accept-breaking goes with --write');
  });
});
