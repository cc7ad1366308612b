import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { type GeneratedFile, isStale, regenerateSections, renderGeneratedFiles, writeGeneratedFiles } from '../../../src/cli/docs/generated-files.js';
import { MissingMarkerError, UnknownSectionError } from '../../../src/lib/errors/internal-errors.js';

const page = (inside: string) => `# Title\n\nBy hand.\n\n<!-- generated:table -->\n${inside}\n<!-- /generated:table -->\n\nMore by hand.\n`;

describe('generated sections', () => {
  it('replaces only the text between the markers, and is stable when run again', () => {
    const once = regenerateSections(page('old rows'), { table: () => '| a |' }, 'page.md');
    expect(once).toBe(page('| a |'));
    expect(regenerateSections(once, { table: () => '| a |' }, 'page.md')).toBe(once);
  });

  it('refuses a file without a section it should hold, naming both', () => {
    const error = (() => {
      try {
        regenerateSections('# no markers', { table: () => '' }, 'docs/page.md');
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(MissingMarkerError);
    expect((error as MissingMarkerError).message).toBe('docs/page.md has no <!-- generated:table --> ... <!-- /generated:table --> markers');
  });

  it('refuses a marker that nothing generates, since its text would never be regenerated', () => {
    expect(() => regenerateSections(page('x'), {}, 'page.md')).toThrow(UnknownSectionError);
  });

  describe('files', () => {
    let root: string | undefined;
    afterEach(async () => {
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('reports every stale file and writes only those', async () => {
      root = await mkdtemp(join(tmpdir(), 'fxgate-docs-'));
      await mkdir(join(root, 'docs'));
      await writeFile(join(root, 'A.md'), page('stale'));
      await writeFile(join(root, 'docs/b.md'), page('| b |'));
      await writeFile(join(root, 'docs/c.md'), page('stale too'));
      const files: GeneratedFile[] = [
        { path: 'A.md', sections: { table: () => '| a |' } },
        { path: 'docs/b.md', sections: { table: () => '| b |' } },
        { path: 'docs/c.md', sections: { table: () => '| c |' } },
      ];
      const states = await renderGeneratedFiles(root, files);
      expect(states.filter(isStale).map((state) => state.path)).toEqual(['A.md', 'docs/c.md']);
      expect((await writeGeneratedFiles(root, states)).map((state) => state.path)).toEqual(['A.md', 'docs/c.md']);
      expect(await readFile(join(root, 'A.md'), 'utf8')).toBe(page('| a |'));
      expect(await readFile(join(root, 'docs/c.md'), 'utf8')).toBe(page('| c |'));
      expect((await renderGeneratedFiles(root, files)).filter(isStale)).toEqual([]);
    });
  });
});
