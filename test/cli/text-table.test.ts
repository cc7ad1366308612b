/**
 * textTable: the CLI's aligned tables.
 */
import { describe, expect, it } from 'vitest';

import { textTable } from '../../src/cli/text-table.js';

describe('textTable', () => {
  it('pads each column to its widest cell, right-aligns columns of numbers, and trims trailing spaces', () => {
    expect(
      textTable(
        ['NAME', 'COUNT', 'NOTE'],
        [
          ['a', 7, ''],
          ['longer', 1234, 'x'],
        ],
      ),
    ).toEqual(['NAME    COUNT  NOTE', 'a           7', 'longer   1234  x']);
  });

  it('treats a column as text when any row has text there, and writes the header alone for no rows', () => {
    expect(
      textTable(
        ['A', 'B'],
        [
          ['1', 2],
          [3, 4],
        ],
      ),
    ).toEqual(['A  B', '1  2', '3  4']);
    expect(textTable(['ID', 'URL'], [])).toEqual(['ID  URL']);
  });

  it('rules the header off with dashes as wide as each column when asked', () => {
    expect(
      textTable(
        ['name', 'n'],
        [
          ['a', 10],
          ['bb', 2],
        ],
        { rule: true },
      ),
    ).toEqual(['name   n', '----  --', 'a     10', 'bb     2']);
    expect(textTable(['ID', 'URL'], [], { rule: true })).toEqual(['ID  URL', '--  ---']);
  });
});
