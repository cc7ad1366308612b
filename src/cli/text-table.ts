/**
 * The CLI's tables for people: columns padded to their widest cell, two spaces apart, numbers
 * right-aligned (a column is numeric when every row has a number there). Pure; prints nothing.
 */

/** One line per row, the header first, trailing spaces trimmed. */
export function textTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  return cells.map((row) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}
