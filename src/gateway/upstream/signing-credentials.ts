/**
 * The gateway's own v3 credential per org and mode (docs/contract.md#auth-legacy): the key the
 * gateway signs its upstream calls with, after it has checked the legacy caller's org, scopes,
 * mode and allowlist itself. Each call gets a fresh JWT and X-Request-Signature from V3RequestSigner; the
 * key file is read and its keys imported once per org and mode, then the signer is cached.
 *
 * Two sources:
 * - KeyDirectoryCredentials: a stand-alone `fxgate gateway` in front of any v3. An operator
 *   provisions `<dir>/<orgId>.<mode>.json` (a v3 key file); a missing one is a typed error.
 * - ProvisioningCredentials: `fxgate all`, which shares the key registry with the core. The
 *   first use for an org and mode creates a key (view, trade, withdraw, webhooks) in the registry
 *   and writes its file into the directory (0600); later uses and later processes reuse the file;
 *   a key found revoked (or unknown to the registry) is replaced, and so is one made before the
 *   gateway needed the webhooks scope (it is revoked once its successor is written).
 *
 * The legacy operations and the legacy webhook registrations use them through V3Client.
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

import { type Mode, MODES, type Scope } from '../../lib/auth/credential-vocabulary.js';
import { V3RequestSigner } from '../../lib/auth/request-signer.js';
import { UpstreamCredentialError } from '../../lib/errors/internal-errors.js';
import { type LoadedKey, loadKey, readKeyFile, writeKeyFile } from '../../lib/keys/key-file.js';
import type { KeyRegistry } from '../../lib/keys/key-registry.js';

export interface UpstreamCredentials {
  /** The signer for this org's v3 credential in this mode; rejects with an UpstreamCredentialError. */
  signerFor(orgId: string, mode: Mode): Promise<V3RequestSigner>;
}

/** Scopes and label of a key ProvisioningCredentials creates; webhooks for the legacy webhook registrations. */
export const PROVISIONED_SCOPES: readonly Scope[] = ['view', 'trade', 'withdraw', 'webhooks'];
export const PROVISIONED_LABEL = 'gateway upstream credential';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The key file path of an org and mode. The org id must be a lower-case UUID (as key names
 * have them), which also keeps the path inside the directory.
 */
export function credentialPath(dir: string, orgId: string, mode: string): string {
  if (!UUID.test(orgId) || !(MODES as readonly string[]).includes(mode)) {
    throw new UpstreamCredentialError(
      'FXGATE_UPSTREAM_CREDENTIAL_BAD_REQUEST',
      orgId,
      mode,
      `no v3 credential can exist for org ${JSON.stringify(orgId)} in mode ${JSON.stringify(mode)}`,
    );
  }
  return join(dir, `${orgId}.${mode}.json`);
}

function isMissingFile(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}

/** Reads the key file; null when there is none; a typed error when it is not a key of this org and mode. */
async function readCredential(path: string, orgId: string, mode: Mode): Promise<LoadedKey | null> {
  let key: LoadedKey;
  try {
    key = await readKeyFile(path);
  } catch (error) {
    if (isMissingFile(error)) return null;
    throw new UpstreamCredentialError(
      'FXGATE_UPSTREAM_CREDENTIAL_INVALID',
      orgId,
      mode,
      `${path} is not a usable key file: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (key.file.orgId !== orgId || key.file.mode !== mode) {
    throw new UpstreamCredentialError(
      'FXGATE_UPSTREAM_CREDENTIAL_INVALID',
      orgId,
      mode,
      `${path} holds a key of org ${key.file.orgId} in mode ${key.file.mode}, not of org ${orgId} in mode ${mode}`,
    );
  }
  return key;
}

/** Operator-provisioned key files, `<dir>/<orgId>.<mode>.json`, imported once each. */
export class KeyDirectoryCredentials implements UpstreamCredentials {
  private readonly signers = new Map<string, Promise<V3RequestSigner>>();

  constructor(
    private readonly dir: string,
    private readonly issuer: string,
  ) {}

  signerFor(orgId: string, mode: Mode): Promise<V3RequestSigner> {
    const cacheKey = `${orgId}.${mode}`;
    const cached = this.signers.get(cacheKey);
    if (cached) return cached;
    const loading = this.load(orgId, mode);
    this.signers.set(cacheKey, loading);
    // A failure is not cached: the operator may provision the file after the first request.
    loading.catch(() => {
      if (this.signers.get(cacheKey) === loading) this.signers.delete(cacheKey);
    });
    return loading;
  }

  private async load(orgId: string, mode: Mode): Promise<V3RequestSigner> {
    const path = credentialPath(this.dir, orgId, mode);
    const key = await readCredential(path, orgId, mode);
    if (!key) {
      throw new UpstreamCredentialError(
        'FXGATE_UPSTREAM_CREDENTIAL_MISSING',
        orgId,
        mode,
        `no v3 credential for org ${orgId} in mode ${mode}: provision ${path}`,
      );
    }
    return new V3RequestSigner(key, { issuer: this.issuer });
  }
}

export interface ProvisioningCredentialsOptions {
  /** The registry the core authenticates against (shared in `fxgate all`). */
  readonly registry: KeyRegistry;
  readonly dir: string;
  readonly issuer: string;
}

/**
 * Keys created on first use in the shared registry. Concurrent first uses in one process share
 * one promise, so they create one key. Each call asks the registry (its own short-TTL cache, no
 * SQL on the hot path) whether the key is still active, and replaces a revoked one. Two
 * processes provisioning the same org and mode at the same instant could each create a key; the
 * last file written wins and the other key is merely unused.
 */
export class ProvisioningCredentials implements UpstreamCredentials {
  private readonly signers = new Map<string, Promise<V3RequestSigner>>();

  constructor(private readonly options: ProvisioningCredentialsOptions) {}

  async signerFor(orgId: string, mode: Mode): Promise<V3RequestSigner> {
    const cacheKey = `${orgId}.${mode}`;
    let current = this.signers.get(cacheKey);
    if (!current) {
      current = this.track(cacheKey, this.provision(orgId, mode));
    }
    const signer = await current;
    if (await this.options.registry.findActive(signer.keyName)) return signer;
    // Revoked since it was cached. Whoever sees it first starts the replacement; the check and
    // the swap run without an await between them, so concurrent callers share one replacement.
    let replacing = this.signers.get(cacheKey);
    if (replacing === current) {
      replacing = this.track(cacheKey, this.provision(orgId, mode, signer.keyName));
    }
    return replacing ?? this.signerFor(orgId, mode);
  }

  private track(cacheKey: string, provisioning: Promise<V3RequestSigner>): Promise<V3RequestSigner> {
    this.signers.set(cacheKey, provisioning);
    provisioning.catch(() => {
      if (this.signers.get(cacheKey) === provisioning) this.signers.delete(cacheKey);
    });
    return provisioning;
  }

  /**
   * The file's key when it is active (and is not the one just found revoked), else a new key.
   * Reading the file first lets a second instance, or a restart, reuse what another wrote.
   */
  private async provision(orgId: string, mode: Mode, revokedName?: string): Promise<V3RequestSigner> {
    const path = credentialPath(this.options.dir, orgId, mode);
    let key = await readCredential(path, orgId, mode);
    const active = key && key.file.name !== revokedName ? await this.options.registry.findActive(key.file.name) : null;
    const narrower = active !== null && !PROVISIONED_SCOPES.every((scope) => active.record.scopes.includes(scope));
    if (!key || active === null || narrower) {
      const file = await this.options.registry.createKey({
        orgId,
        mode,
        scopes: PROVISIONED_SCOPES,
        label: PROVISIONED_LABEL,
      });
      await writeAtomically(path, file);
      // Left active, a superseded key would be a credential nobody uses; processes holding it re-read the file once it is revoked.
      if (narrower) await this.options.registry.revoke(key!.file.name);
      key = loadKey(file);
    }
    return new V3RequestSigner(key, { issuer: this.options.issuer });
  }
}

/** Writes to a temporary file (0600) and renames it, so no reader ever sees half a key file. */
async function writeAtomically(path: string, file: Parameters<typeof writeKeyFile>[1]): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeKeyFile(temporary, file);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}
