import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkoutRoot, missingFiles } from '../../src/cli/repository.js';
import { CliError } from '../../src/lib/errors/internal-errors.js';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

describe('checkoutRoot', () => {
  let installed: string;
  beforeAll(async () => {
    // An installed package: package.json, dist/ and mappings/, and no manual.
    installed = await mkdtemp(join(tmpdir(), 'fxgate-installed-'));
    await writeFile(join(installed, 'package.json'), JSON.stringify({ name: 'fxgate' }));
    await mkdir(join(installed, 'dist'));
    await mkdir(join(installed, 'mappings'));
  });
  afterAll(async () => {
    await rm(installed, { recursive: true, force: true });
  });

  it('is the checkout this fxgate runs from', () => {
    expect(checkoutRoot('docs')).toBe(ROOT);
  });

  it('says in one line, for an installed package, that the command works on a checkout', () => {
    let caught: unknown;
    try {
      checkoutRoot('openapi', installed);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect(caught).toMatchObject({
      exitCode: 2,
      message: `the openapi command works on a checkout of the fxgate repository, and ${installed} is an installed package (it has no docs/): run it in a clone, or give --root <checkout>`,
    });
    expect((caught as Error).message).not.toContain('\n');
  });
});

describe('missingFiles', () => {
  it('names the paths that are not under the root, in their order', () => {
    expect(missingFiles(ROOT, ['README.md', 'docs/none.md', 'package.json', 'none'])).toEqual(['docs/none.md', 'none']);
  });
});
