/**
 * Where fxgate's own files are: the package root, the folder holding fxgate's package.json, found
 * from this module's own location (src/cli/ run through tsx, or dist/cli/ built, both two folders
 * below it), never from the working folder; and whether that root is a checkout of the
 * repository, which has the manual (docs/), or an installed package, which has only dist/ and
 * mappings/. Reads the file system only.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root seen from `moduleUrl`, a module two folders below it. */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  const root = resolve(fileURLToPath(new URL('../../', moduleUrl)));
  const manifest = join(root, 'package.json');
  // A moved module would otherwise send the commands to some other folder's files.
  const name = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name : null;
  if (name !== 'fxgate')
    throw new Error(
      `${root} holds no package.json of fxgate: package-root.ts must sit two folders below the package root`,
    );
  return root;
}

/** A checkout of the repository has the manual beside the code; an installed package does not. */
export function isCheckout(root: string): boolean {
  return existsSync(join(root, 'docs'));
}
