/**
 * The CLI's tables for people: columns padded to their widest cell, two spaces apart, numbers
 * right-aligned (a column is numeric when every row has a number there). Pure; prints nothing.
 */

export interface TextTableOptions {
  /** A line of dashes under the header, each as wide as its column. */
  readonly rule?: boolean;
}

/** One line per row, the header first, trailing spaces trimmed. */
export function textTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  options: TextTableOptions = {},
): string[] {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  const [head, ...body] = cells.map(line);
  return options.rule ? [head!, line(widths.map((width) => '-'.repeat(width))), ...body] : [head!, ...body];
}
