/**
 * The sandbox org and key `fxgate all` provides, so that a newcomer can call the API at once.
 * The org id is remembered in the data folder, and its key file is written beside it; later
 * starts reuse both. When the key is no longer active (revoked, or the database was replaced),
 * a new key for the same org takes the file's place.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { z } from 'zod';

import { SCOPES } from '../lib/auth/credential-vocabulary.js';
import { newUuid } from '../lib/ids.js';
import { readKeyFile, writeKeyFile } from '../lib/keys/key-file.js';
import type { KeyRegistry } from '../lib/keys/key-registry.js';

export const SANDBOX_RECORD_FILE = 'sandbox.json';
export const SANDBOX_KEY_LABEL = 'sandbox key made by fxgate all';

const sandboxRecordSchema = z.object({ orgId: z.uuid() });

export interface SandboxKey {
  readonly orgId: string;
  readonly keyName: string;
  readonly path: string;
  readonly created: boolean;
}

async function sandboxOrgId(dataDir: string): Promise<string> {
  const recordPath = join(dataDir, SANDBOX_RECORD_FILE);
  try {
    return sandboxRecordSchema.parse(JSON.parse(await readFile(recordPath, 'utf8'))).orgId;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`${recordPath} is damaged; delete it to start a new sandbox org`, { cause: error });
  }
  const orgId = newUuid();
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(recordPath, `${JSON.stringify({ orgId }, null, 2)}\n`, { mode: 0o600 });
  return orgId;
}

/** The name of the still-active key in the file, or null when there is none to reuse. */
async function reusableKey(path: string, orgId: string, registry: KeyRegistry): Promise<string | null> {
  let name: string;
  try {
    const { file } = await readKeyFile(path);
    if (file.orgId !== orgId) return null;
    name = file.name;
  } catch {
    return null; // missing or unreadable: a new key file replaces it
  }
  return (await registry.findActive(name)) !== null ? name : null;
}

export async function ensureSandboxKey(dataDirSetting: string, registry: KeyRegistry): Promise<SandboxKey> {
  const dataDir = resolve(dataDirSetting);
  const orgId = await sandboxOrgId(dataDir);
  const path = join(dataDir, 'keys', `${orgId}.json`);
  const existing = await reusableKey(path, orgId, registry);
  if (existing !== null) return { orgId, keyName: existing, path, created: false };
  await registry.ensureOrg(orgId, 'sandbox');
  const file = await registry.createKey({ orgId, scopes: SCOPES, mode: 'sandbox', label: SANDBOX_KEY_LABEL });
  await writeKeyFile(path, file);
  return { orgId, keyName: file.name, path, created: true };
}
