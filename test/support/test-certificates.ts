/**
 * A certificate authority and a server certificate for 127.0.0.1, made with the local openssl in
 * a temporary folder, for tests of servers that speak TLS on loopback (Redis and Sentinel with
 * `tls-port`). Nothing here is a secret: the keys live as long as the test run.
 *
 * It may touch: its own temporary folder and the openssl binary.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { findExecutableDir, runCommand } from './local-processes.js';

export interface TestCertificates {
  readonly dir: string;
  /** PEM files: the authority, and the server's certificate and key (subjectAltName IP:127.0.0.1). */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The authority's certificate, PEM, for a client's `ca`. */
  readonly ca: string;
  remove(): Promise<void>;
}

const OPENSSL_INSTALL_HINT = 'install openssl (Debian/Ubuntu: apt-get install openssl)';

export async function makeTestCertificates(): Promise<TestCertificates> {
  const binDir = findExecutableDir(['openssl'], ['/usr/bin', '/usr/local/bin']);
  if (binDir === null) throw new Error(`no openssl in PATH, /usr/bin or /usr/local/bin: ${OPENSSL_INSTALL_HINT}`);
  const openssl = path.join(binDir, 'openssl');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-test-tls-'));
  const file = (name: string): string => path.join(dir, name);
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    await runCommand(openssl, [
      'req',
      '-x509',
      ...curve,
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=fxgate test CA',
    ]);
    await runCommand(openssl, [
      'req',
      ...curve,
      '-keyout',
      file('server.key'),
      '-out',
      file('server.csr'),
      '-subj',
      '/CN=127.0.0.1',
    ]);
    await writeFile(file('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    await runCommand(openssl, [
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file('server.crt'),
      '-days',
      '2',
      '-extfile',
      file('server.ext'),
    ]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    caFile: file('ca.crt'),
    certFile: file('server.crt'),
    keyFile: file('server.key'),
    ca: await readFile(file('ca.crt'), 'utf8'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
