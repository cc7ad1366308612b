import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { describe, expect, it } from 'vitest';

import { isCheckout, packageRoot } from '../../src/cli/package-root.js';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

describe('packageRoot', () => {
  it("is the folder of fxgate's package.json, seen from the module run through tsx or built", () => {
    expect(packageRoot()).toBe(ROOT);
    expect(packageRoot(pathToFileURL(join(ROOT, 'src/cli/package-root.ts')).href)).toBe(ROOT);
    expect(packageRoot(pathToFileURL(join(ROOT, 'dist/cli/package-root.js')).href)).toBe(ROOT);
  });

  it("refuses a folder whose package.json is not fxgate's, or that has none", async () => {
    const other = await mkdtemp(join(tmpdir(), 'fxgate-other-package-'));
    try {
      const moduleUrl = pathToFileURL(join(other, 'a/b/module.js')).href;
      expect(() => packageRoot(moduleUrl)).toThrow(/holds no package.json of fxgate/);
      await writeFile(join(other, 'package.json'), JSON.stringify({ name: 'something-else' }));
      expect(() => packageRoot(moduleUrl)).toThrow(/holds no package.json of fxgate/);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('isCheckout', () => {
  it('tells a checkout, which has the manual, from an installed package', async () => {
    expect(isCheckout(ROOT)).toBe(true);
    const installed = await mkdtemp(join(tmpdir(), 'fxgate-installed-'));
    try {
      expect(isCheckout(installed)).toBe(false);
    } finally {
      await rm(installed, { recursive: true, force: true });
    }
  });
});
