/**
 * How a CLI command finds the fxgate process that holds the embedded data folder, to go through
 * its admin listener. Beside the lock (`pglite.lock`, its pid), the process writes:
 *
 *   admin.json   {"pid": 1234, "url": "http://127.0.0.1:8081"}, or "url": null without a listener
 *   admin.token  64 hex digits (32 random bytes), the bearer token of its /admin/cli/ routes
 *
 * both mode 0600, and removes them at a clean shutdown; the next holder of the lock removes what
 * a crashed one left. The CLI uses them only when both are its own user's and closed to everyone
 * else, admin.json names the live holder of the lock, and the URL is a loopback address.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { isIPv4 } from 'node:net';
import { join } from 'node:path';

import { z } from 'zod';

import { CliError } from '../../lib/errors/internal-errors.js';
import { boundUrl, loopbackUrlOf } from '../serve.js';

export const ADMIN_ADDRESS_FILE = 'admin.json';
export const ADMIN_TOKEN_FILE = 'admin.token';

const TOKEN = /^[0-9a-f]{64}$/;
const addressSchema = z.object({ pid: z.number().int().positive(), url: z.string().nullable() });
export type PublishedAdmin = z.infer<typeof addressSchema>;

/** 32 random bytes, in hex. */
export function newAdminToken(): string {
  return randomBytes(32).toString('hex');
}

/** The URL a local client reaches a listener on: a wildcard bind is reached over loopback. */
export function localAdminUrl(address: AddressInfo): string {
  const bound = boundUrl(address);
  return loopbackUrlOf(bound) ?? bound;
}

export function isLoopbackAddress(address: string): boolean {
  const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  return plain === '::1' || (isIPv4(plain) && plain.startsWith('127.'));
}

/** Replaces path with text, mode 0600, through a fresh temporary file: a reader sees the old file or the new, whole. */
async function writePrivateFile(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await unlink(temporary).catch(() => undefined);
  const handle = await open(temporary, 'wx', 0o600);
  try {
    // The umask may have taken bits off the mode at creation; set it whole.
    await handle.chmod(0o600);
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

/** Removes what an earlier holder of the lock published; called by the new holder. */
export async function clearPublishedAdmin(dataDir: string): Promise<void> {
  await Promise.all(
    [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE].map((name) => unlink(join(dataDir, name)).catch(() => undefined)),
  );
}

/**
 * Publishes the admin listener's URL and token (or, with a null URL, that there is no listener);
 * resolves to their removal, which leaves files another process has written since.
 */
export async function publishAdmin(dataDir: string, url: string | null, token: string): Promise<() => Promise<void>> {
  if (url === null) await unlink(join(dataDir, ADMIN_TOKEN_FILE)).catch(() => undefined);
  else await writePrivateFile(join(dataDir, ADMIN_TOKEN_FILE), `${token}\n`);
  await writePrivateFile(
    join(dataDir, ADMIN_ADDRESS_FILE),
    `${JSON.stringify({ pid: process.pid, url } satisfies PublishedAdmin)}\n`,
  );
  return async () => {
    const ours = async (name: string, isOurs: (text: string) => boolean): Promise<void> => {
      const path = join(dataDir, name);
      const text = await readFile(path, 'utf8').catch(() => null);
      if (text !== null && isOurs(text)) await unlink(path).catch(() => undefined);
    };
    await ours(ADMIN_ADDRESS_FILE, (text) => addressSchema.safeParse(parseJson(text)).data?.pid === process.pid);
    await ours(ADMIN_TOKEN_FILE, (text) => text.trim() === token);
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function refused(path: string, reason: string): CliError {
  return new CliError(
    `refusing ${path}: ${reason}. Stop the running fxgate and start it again, which writes it afresh`,
  );
}

/**
 * The file's text, after checking that it is a regular file of this user's that nobody else can
 * read or write; null when it does not exist. Checked on the opened file, so it cannot change
 * between the check and the read.
 */
async function readPrivateFile(path: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw refused(path, 'it is a symbolic link');
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refused(path, 'it is not a regular file');
    // Windows has neither owners as numbers nor these mode bits.
    if (process.platform !== 'win32') {
      const uid = process.getuid!();
      if (stats.uid !== uid) throw refused(path, `it belongs to user ${stats.uid}, not to you (${uid})`);
      const mode = stats.mode & 0o777;
      if ((mode & 0o077) !== 0)
        throw refused(path, `its mode is ${mode.toString(8).padStart(4, '0')}, open to other users; it must be 0600`);
    }
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** What the holder of the lock published, or null when there is nothing (yet). */
export async function readPublishedAdmin(dataDir: string): Promise<PublishedAdmin | null> {
  const path = join(dataDir, ADMIN_ADDRESS_FILE);
  const text = await readPrivateFile(path);
  if (text === null) return null;
  const parsed = addressSchema.safeParse(parseJson(text));
  // Half-written files cannot happen (they are renamed into place): this one is someone else's.
  if (!parsed.success) throw refused(path, 'it is not what fxgate writes');
  return parsed.data;
}

/** The token, checked as readPrivateFile does. */
export async function readAdminToken(dataDir: string): Promise<string> {
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  const text = await readPrivateFile(path);
  if (text === null)
    throw new CliError(
      `${path} is missing, though ${join(dataDir, ADMIN_ADDRESS_FILE)} names an admin listener. Stop the running fxgate and start it again, which writes both afresh`,
    );
  const token = text.trim();
  if (!TOKEN.test(token)) throw refused(path, 'it is not what fxgate writes');
  return token;
}

/** The published URL, when the token may be sent to it: http to a loopback address. */
export function checkAdminUrl(url: string, pid: number): URL {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  const host = parsed?.hostname.replace(/^\[(.*)\]$/, '$1') ?? '';
  if (parsed === null || parsed.protocol !== 'http:' || !isLoopbackAddress(host) || parsed.pathname !== '/') {
    throw new CliError(
      `the admin listener of fxgate (pid ${pid}) is at ${url}, not an http:// URL of a loopback address: the CLI sends its token only over loopback. ` +
        'Restart that process with FXGATE_ADMIN_HOST=127.0.0.1, or stop it and run the command again',
    );
  }
  return parsed;
}
