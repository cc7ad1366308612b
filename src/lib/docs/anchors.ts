/**
 * The anchor a Markdown heading gets where the manual is read (GitHub's rule): the heading's
 * text in lower case, punctuation other than `-` and `_` dropped, spaces turned into `-`, and
 * `-1`, `-2` ... after a repeated one. Generated tables link to generated headings with it, and
 * the docs test checks every link of the manual against it. Pure functions.
 */

/** The anchor of one heading, before repeats are told apart. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown document's headings, in order, repeats numbered; fenced code is skipped. */
export function headingAnchors(markdown: string): string[] {
  const seen = new Map<string, number>();
  const anchors: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = headingAnchor(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.push(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
