/**
 * Setting names: which `FXGATE_` names of an environment fxgate does not know, and the known
 * setting each is most likely a typo of. Pure functions over the names it is given; config.ts
 * owns the list of known names and decides what an unknown one does.
 */
import editDistance from 'damerau-levenshtein';

/** The prefix of fxgate's own settings: an unknown name with it is a typo or a leftover, never another program's. */
export const SETTING_PREFIX = 'FXGATE_';

/** An unknown name, and the setting it is nearest to, if any is near. */
export interface UnknownSetting {
  readonly name: string;
  readonly suggestion: string | undefined;
}

/**
 * Past this many edits (transpositions count as one), a name is another word rather than a typo:
 * a third of the name's length, as rustc's suggestions allow, and never more than 4.
 */
function mostEdits(length: number): number {
  return Math.min(4, Math.max(1, Math.floor(length / 3)));
}

/** A name without the prefix, upper-cased: PORT with the prefix is compared with PORT, the typo being the prefix. */
function stem(name: string): string {
  const upper = name.toUpperCase();
  return upper.startsWith(SETTING_PREFIX) ? upper.slice(SETTING_PREFIX.length) : upper;
}

/** Its words in order: BROWNOUTS_V1 and V1_BROWNOUTS have the same. */
function sortedWords(stemmed: string): string {
  return stemmed.split('_').filter(Boolean).sort().join('_');
}

/** How far `name` is from `setting`: as written, or with the words of both put in order. */
function distance(name: string, setting: string): number {
  const [a, b] = [stem(name), stem(setting)];
  return Math.min(editDistance(a, b).steps, editDistance(sortedWords(a), sortedWords(b)).steps);
}

/** The setting `name` is most likely a typo of, or undefined when none is near; the first of `settings` wins a tie. */
export function nearestSetting(name: string, settings: Iterable<string>): string | undefined {
  const limit = mostEdits(stem(name).length);
  let best: { setting: string; edits: number } | undefined;
  for (const setting of settings) {
    const edits = distance(name, setting);
    if (edits <= limit && (best === undefined || edits < best.edits)) best = { setting, edits };
  }
  return best?.setting;
}

/**
 * Every name of `env` with the prefix that is not in `known`, sorted, each with the
 * nearest of `suggestible`. An empty value counts as unset, as it does for the settings themselves.
 */
export function unknownSettings(
  env: Readonly<Record<string, string | undefined>>,
  known: ReadonlySet<string>,
  suggestible: readonly string[],
): UnknownSetting[] {
  return Object.entries(env)
    .filter(
      ([name, value]) => name.startsWith(SETTING_PREFIX) && !known.has(name) && value !== undefined && value !== '',
    )
    .map(([name]) => name)
    .sort()
    .map((name) => ({ name, suggestion: nearestSetting(name, suggestible) }));
}

/** `<name> is not a setting fxgate knows (did you mean <setting>?)` */
export function describeUnknownSetting({ name, suggestion }: UnknownSetting): string {
  return `${name} is not a setting fxgate knows${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}`;
}
