/**
 * The anchor a Markdown heading gets where the manual is read: GitHub's rule, as github-slugger
 * implements it (lower case, punctuation but `-` and `_` dropped, spaces turned into `-`, and
 * `-1`, `-2` ... after a repeated one). Generated tables link to generated headings with it, and
 * the docs test checks every link of the manual against it. Pure functions.
 */
import GithubSlugger, { slug } from 'github-slugger';

/** The anchor of one heading, before repeats are told apart. */
export function headingAnchor(heading: string): string {
  return slug(heading.trim());
}

/** The anchors of a Markdown document's headings, in order, repeats numbered; fenced code is skipped. */
export function headingAnchors(markdown: string): string[] {
  const slugger = new GithubSlugger();
  const anchors: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.push(slugger.slug(heading[1]!));
  }
  return anchors;
}
