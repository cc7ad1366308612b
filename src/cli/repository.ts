/**
 * The repository checkout the commands that keep its generated files work on (`fxgate docs`,
 * `fxgate openapi`): the one this fxgate runs from, found from its own files rather than from the
 * working folder, so that a check run from another folder gives the same verdict. An installed
 * package has no manual to check, which is said in one line. Reads the file system only.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Where the OpenAPI snapshots are, from the repository root. */
export const SNAPSHOT_DIRECTORY = 'docs/openapi';

import { CliError, EXIT_CODES } from '../lib/errors/internal-errors.js';
import { isCheckout, packageRoot } from './package-root.js';

/** The checkout this fxgate runs from; a usage error for an installed package. */
export function checkoutRoot(command: string, root: string = packageRoot()): string {
  if (!isCheckout(root))
    throw new CliError(
      `the ${command} command works on a checkout of the fxgate repository, and ${root} is an installed package (it has no docs/): run it in a clone, or give --root <checkout>`,
      EXIT_CODES.usage,
    );
  return root;
}

/** Which of `paths`, from `root`, are not there. */
export function missingFiles(root: string, paths: readonly string[]): string[] {
  return paths.filter((path) => !existsSync(join(root, path)));
}
