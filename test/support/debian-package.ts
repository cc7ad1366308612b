/**
 * A server binary a test needs from a Debian package (pgbouncer, haproxy, redis-sentinel): found
 * where the package puts it, or, when it is missing and the run is root, installed with apt-get
 * without letting the package start its own system service. Anything else fails saying what to
 * install: a suite that needs the binary never skips.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { findExecutableDir, isRoot, runCommand } from './local-processes.js';

export interface DebianBinary {
  /** The executable's name, e.g. `pgbouncer`. */
  readonly binary: string;
  /** The Debian package that ships it. */
  readonly package: string;
  /** Where the package puts it when that is not in PATH (e.g. /usr/sbin for a non-root PATH). */
  readonly dirs?: readonly string[];
}

/**
 * invoke-rc.d asks this file whether a package may start its service; 101 is "no". Only one that
 * this run wrote is removed again.
 */
const POLICY_RC_D = '/usr/sbin/policy-rc.d';
/** Other runs on the machine may hold dpkg's lock for a while (another package's install). */
const DPKG_LOCK_TIMEOUT_S = 300;
/** The lock wait, then the download and the install. */
const APT_TIMEOUT_MS = (DPKG_LOCK_TIMEOUT_S + 300) * 1000;

/** The absolute path of the binary, installed first when missing and the run is root. */
export async function ensureDebianBinary(spec: DebianBinary): Promise<string> {
  const dirs = spec.dirs ?? ['/usr/sbin', '/usr/bin'];
  const found = findExecutableDir([spec.binary], dirs);
  if (found !== null) return path.join(found, spec.binary);
  const hint = `install it with: apt-get install ${spec.package}`;
  if (!isRoot()) throw new Error(`no ${spec.binary} in PATH or ${dirs.join(', ')}, and the run is not root: ${hint}`);
  await installPackage(spec.package).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${spec.binary} is missing and installing ${spec.package} failed: ${reason}\n(${hint})`, {
      cause: error,
    });
  });
  const installed = findExecutableDir([spec.binary], dirs);
  if (installed === null) throw new Error(`installed ${spec.package}, yet no ${spec.binary} in ${dirs.join(', ')}`);
  return path.join(installed, spec.binary);
}

async function installPackage(name: string): Promise<void> {
  const wrotePolicy = !existsSync(POLICY_RC_D);
  if (wrotePolicy) writeFileSync(POLICY_RC_D, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  const aptGet = (args: readonly string[]): Promise<string> =>
    runCommand(
      'env',
      ['DEBIAN_FRONTEND=noninteractive', 'apt-get', '-o', `DPkg::Lock::Timeout=${DPKG_LOCK_TIMEOUT_S}`, ...args],
      APT_TIMEOUT_MS,
    );
  const install = (): Promise<string> => aptGet(['install', '-y', '--no-install-recommends', name]);
  try {
    // The package lists may be missing or stale (a fresh container): refreshed once, then again.
    await install().catch(async () => {
      await aptGet(['update']);
      await install();
    });
  } finally {
    if (wrotePolicy) await rm(POLICY_RC_D, { force: true });
  }
}
