/**
 * Files with generated sections (README.md, docs/*.md, CHANGELOG.md): each section sits between
 * `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` and is rendered from its single source
 * (the error catalog, the configuration schema, the v3 operation declarations, `mappings/`). Text
 * outside the markers is written by hand and kept as it is. `fxgate docs --write` rewrites the
 * sections in place; `--check` and a test report every file whose sections are stale.
 *
 * Part of the CLI's docs command (commands/docs.ts), which names the files and their sections:
 * it reads and writes the files it is given and knows no renderer of its own.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { MissingMarkerError, UnknownSectionError } from '../../lib/errors/internal-errors.js';

/** A section's renderer, by its marker name. */
export type SectionRenderers = Readonly<Record<string, () => string>>;

/** A file with generated sections: its path from the repository root, and each section it holds. */
export interface GeneratedFile {
  readonly path: string;
  readonly sections: SectionRenderers;
}

const MARKER = /<!-- generated:([a-z0-9-]+) -->/g;

/**
 * The text with every section replaced by its current rendering. Throws MissingMarkerError for a
 * section the text lacks (a renamed heading must not drop a table silently) and
 * UnknownSectionError for a marker no renderer names.
 */
export function regenerateSections(text: string, sections: SectionRenderers, file: string): string {
  for (const match of text.matchAll(MARKER)) {
    if (!Object.hasOwn(sections, match[1]!)) throw new UnknownSectionError(file, match[1]!);
  }
  let out = text;
  for (const [section, render] of Object.entries(sections)) {
    const start = `<!-- generated:${section} -->`;
    const end = `<!-- /generated:${section} -->`;
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from === -1 || to === -1 || to < from) throw new MissingMarkerError(file, section);
    out = `${out.slice(0, from + start.length)}\n${render()}\n${out.slice(to)}`;
  }
  return out;
}

/** One file as it is on disk and as it would be generated. */
export interface GeneratedFileState {
  readonly path: string;
  readonly current: string;
  readonly generated: string;
}

export const isStale = (state: GeneratedFileState): boolean => state.current !== state.generated;

/** Reads every file under `root` and renders its sections, writing nothing. */
export async function renderGeneratedFiles(root: string, files: readonly GeneratedFile[]): Promise<GeneratedFileState[]> {
  return Promise.all(
    files.map(async (file) => {
      const current = await readFile(join(root, file.path), 'utf8');
      return { path: file.path, current, generated: regenerateSections(current, file.sections, file.path) };
    }),
  );
}

/** Writes the stale files among `states`; returns them. */
export async function writeGeneratedFiles(root: string, states: readonly GeneratedFileState[]): Promise<GeneratedFileState[]> {
  const stale = states.filter(isStale);
  for (const state of stale) await writeFile(join(root, state.path), state.generated);
  return stale;
}
