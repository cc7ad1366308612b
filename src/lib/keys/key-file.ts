/**
 * The API key file, as a dashboard hands it out (docs/contract.md#auth-keys):
 * `{name, orgId, privateKey (PKCS#8 PEM), publicKey (SPKI PEM), scopes, mode}`.
 * It is what a client (and the gateway, for its own v3 credential) signs with.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { z } from 'zod';

import { keyName, MODES, parseKeyName, SCOPES } from '../auth/credential-vocabulary.js';
import { StrictJsonError } from '../errors/internal-errors.js';
import { parseStrictJson } from '../json/strict-json.js';

export const keyFileSchema = z
  .object({
    name: z.string().refine((name) => parseKeyName(name) !== null, 'must be org/{orgId}/apiKey/{keyId}'),
    orgId: z.uuid(),
    privateKey: z.string().includes('PRIVATE KEY'),
    publicKey: z.string().includes('PUBLIC KEY'),
    scopes: z.array(z.enum(SCOPES)).min(1),
    mode: z.enum(MODES),
  })
  .refine((file) => parseKeyName(file.name)?.orgId === file.orgId, 'orgId must match the key name');
export type KeyFile = z.infer<typeof keyFileSchema>;

/** A key file with its keys imported once: parsing PEM per request is many times slower. */
export interface LoadedKey {
  readonly file: KeyFile;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

export function generateKeyFile(input: {
  orgId: string;
  keyId: string;
  scopes: KeyFile['scopes'];
  mode: KeyFile['mode'];
}): KeyFile {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    name: keyName(input.orgId, input.keyId),
    orgId: input.orgId,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    scopes: [...input.scopes],
    mode: input.mode,
  };
}

export function loadKey(file: KeyFile): LoadedKey {
  return { file, privateKey: createPrivateKey(file.privateKey), publicKey: createPublicKey(file.publicKey) };
}

/** Read as strictly as a request body: a repeated key could name one key to one reader and another to the next. */
export async function readKeyFile(path: string): Promise<LoadedKey> {
  let json: unknown;
  try {
    json = parseStrictJson(await readFile(path, 'utf8'));
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error;
    throw new Error(
      `${path} is not an fxgate key file: ${error.path === '' ? '' : `${error.path}: `}${error.message}`,
      {
        cause: error,
      },
    );
  }
  const parsed = keyFileSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `${path} is not an fxgate key file: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return loadKey(parsed.data);
}

/** Writes the key file readable by its owner only: it holds a private key. */
export async function writeKeyFile(path: string, file: KeyFile): Promise<void> {
  // A folder it makes holds private keys: its owner's only.
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}
