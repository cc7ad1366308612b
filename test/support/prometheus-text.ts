/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of what a
 * /metrics endpoint serves: prom-client writes the text but has no parser. It checks the
 * grammar line by line (HELP and TYPE lines, sample lines with escaped label values and a float
 * value) and the rules across lines: one TYPE per family, before its samples; every sample of a
 * declared family (a histogram's by its _bucket, _sum and _count); no series twice; a histogram's
 * buckets cumulative, with an `le="+Inf"` bucket equal to its _count. Any breach throws, naming
 * the line.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name (`x_bucket` for a histogram `x`). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES: readonly MetricType[] = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

function parseValue(text: string, line: string): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text))
    throw new Error(`not a float: ${JSON.stringify(text)} in ${JSON.stringify(line)}`);
  return Number(text);
}

/** `{a="x",b="y"}` from `at` (just past the name); the labels and where the text after `}` starts. */
function parseLabels(line: string, at: number): { labels: Record<string, string>; next: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  const fail = (why: string): never => {
    throw new Error(`${why} at column ${i} of ${JSON.stringify(line)}`);
  };
  if (line[i] === '}') return { labels, next: i + 1 };
  for (;;) {
    const nameStart = i;
    while (i < line.length && line[i] !== '=') i++;
    const name = line.slice(nameStart, i);
    if (!LABEL_NAME.test(name)) fail(`bad label name ${JSON.stringify(name)}`);
    if (Object.hasOwn(labels, name)) fail(`label ${name} twice`);
    if (line[i + 1] !== '"') fail('label value not quoted');
    i += 2;
    let value = '';
    for (;;) {
      if (i >= line.length) fail('unterminated label value');
      const char = line[i]!;
      if (char === '"') break;
      if (char === '\\') {
        const escaped = line[i + 1];
        if (escaped === '\\') value += '\\';
        else if (escaped === '"') value += '"';
        else if (escaped === 'n') value += '\n';
        else fail(`bad escape \\${escaped ?? ''}`);
        i += 2;
        continue;
      }
      value += char;
      i++;
    }
    labels[name] = value;
    i++;
    if (line[i] === ',') {
      i++;
      if (line[i] === '}') return { labels, next: i + 1 };
      continue;
    }
    if (line[i] === '}') return { labels, next: i + 1 };
    fail('expected , or }');
  }
}

function familyOf(sampleName: string, families: ReadonlyMap<string, Family>): Family | undefined {
  const direct = families.get(sampleName);
  if (direct !== undefined) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family !== undefined && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket')))
      return family;
  }
  return undefined;
}

function checkHistogram(family: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  const keyOf = (labels: Readonly<Record<string, string>>): string =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([name]) => name !== 'le')
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  for (const sample of family.samples) {
    const entry = series.get(keyOf(sample.labels)) ?? { buckets: [] };
    series.set(keyOf(sample.labels), entry);
    if (sample.name.endsWith('_bucket')) {
      const le = sample.labels.le;
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, le), sample.value]);
    } else if (sample.name.endsWith('_count')) entry.count = sample.value;
  }
  for (const [key, entry] of series) {
    const sorted = [...entry.buckets].sort(([a], [b]) => a - b);
    for (let index = 1; index < sorted.length; index++) {
      if (sorted[index]![1] < sorted[index - 1]![1]) throw new Error(`${family.name}${key}: buckets not cumulative`);
    }
    const last = sorted.at(-1);
    if (last === undefined || last[0] !== Infinity) throw new Error(`${family.name}${key}: no le="+Inf" bucket`);
    if (entry.count !== last[1])
      throw new Error(`${family.name}${key}: _count ${entry.count} is not the +Inf bucket's ${last[1]}`);
  }
}

/** The families of an exposition, by name; throws at the first breach of the format. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const seen = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (match === null) continue; // a comment
      const [, keyword, name, rest] = match as unknown as [string, 'HELP' | 'TYPE', string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in ${JSON.stringify(line)}`);
      if (keyword === 'HELP') {
        if (helps.has(name)) throw new Error(`HELP twice for ${name}`);
        helps.set(name, rest);
        continue;
      }
      if (!(TYPES as readonly string[]).includes(rest)) throw new Error(`bad type in ${JSON.stringify(line)}`);
      if (families.has(name)) throw new Error(`TYPE twice for ${name}`);
      families.set(name, { name, type: rest as MetricType, help: helps.get(name) ?? '', samples: [] });
      continue;
    }
    const nameEnd = line.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const name = line.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`bad sample name in ${JSON.stringify(line)}`);
    let labels: Record<string, string> = {};
    let next = nameEnd;
    if (line[nameEnd] === '{') ({ labels, next } = parseLabels(line, nameEnd));
    const tail = line.slice(next);
    const parts = /^ (\S+)(?: (-?\d+))?$/.exec(tail);
    if (parts === null) throw new Error(`bad value part ${JSON.stringify(tail)} in ${JSON.stringify(line)}`);
    const family = familyOf(name, families);
    if (family === undefined) throw new Error(`sample of an undeclared family: ${JSON.stringify(line)}`);
    const id = `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;
    if (seen.has(id)) throw new Error(`series twice: ${JSON.stringify(line)}`);
    seen.add(id);
    family.samples.push({ name, labels, value: parseValue(parts[1]!, line) });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; 0 when none has them. */
export function sampleValue(
  families: ReadonlyMap<string, Family>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  const family = familyOf(name, families);
  if (family === undefined) throw new Error(`no family for ${name}`);
  const matching = family.samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  );
  if (matching.length > 1) throw new Error(`${matching.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matching[0]?.value ?? 0;
}

/** Every label value of every sample, with where it was. */
export function labelValues(
  families: ReadonlyMap<string, Family>,
): { readonly sample: string; readonly label: string; readonly value: string }[] {
  return [...families.values()].flatMap((family) =>
    family.samples.flatMap((sample) =>
      Object.entries(sample.labels).map(([label, value]) => ({ sample: sample.name, label, value })),
    ),
  );
}
