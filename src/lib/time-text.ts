/**
 * Times as operators write them, read strictly: ISO 8601 instants (with their zone, so that an
 * instant means one moment wherever it is read), ISO 8601 durations and intervals (the brownout
 * windows), and the short "how far back" durations of the usage report (`7d`, `24h`, `30m`).
 * Every refusal is a TimeTextError whose message says what to write instead. And the two header
 * forms of an instant: RFC 9110's IMF-fixdate and RFC 9745's structured-field Date (`@seconds`).
 */

import { TimeTextError } from './errors/internal-errors.js';

/** A half-open window of time, [start, end), in ms since the epoch. */
export interface TimeInterval {
  readonly start: number;
  readonly end: number;
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}:\d{2})$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT_EXAMPLE = '2026-12-31T23:59:59Z';

function shown(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}...` : text);
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** ms since the epoch of a calendar date and time in UTC, or null when a field is out of range (Date.UTC would roll it over). */
function utcOf(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | null {
  if (
    year < 1970 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysIn(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return null;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/** An ISO 8601 instant with its zone (`2026-12-31T23:59:59Z`, `2026-12-31T18:00:00-05:00`), in ms since the epoch. */
export function parseInstant(text: string): number {
  const match = INSTANT.exec(text.trim());
  if (match === null) {
    const hint = /^\d{4}-\d{2}-\d{2}T[\d:.,]+$/.test(text.trim())
      ? ': add its zone, Z for UTC or an offset such as +01:00'
      : '';
    throw new TimeTextError(`${shown(text)} is not an ISO 8601 instant such as ${INSTANT_EXAMPLE}${hint}`);
  }
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const utc = utcOf(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second ?? 0));
  if (utc === null)
    throw new TimeTextError(
      `${shown(text)} names no real date and time (check the day of the month, and hours 00-23, minutes and seconds 00-59)`,
    );
  const ms = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000);
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    const [hours, minutes] = zone!.slice(1).split(':').map(Number);
    if (hours! > 23 || minutes! > 59)
      throw new TimeTextError(`${shown(text)} has an offset out of range (at most ±23:59)`);
    offsetMinutes = sign * (hours! * 60 + minutes!);
  }
  return utc + ms - offsetMinutes * 60_000;
}

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/** An ISO 8601 duration of fixed length (`PT1H`, `P1DT12H`, `PT90M`, `P2W`), in ms; years and months are refused (their length depends on the calendar). */
export function parseIsoDuration(text: string): number {
  const trimmed = text.trim().toUpperCase();
  if (/^P[^T]*[YM]/.test(trimmed)) {
    throw new TimeTextError(
      `${shown(text)}: years and months have no fixed length; write the duration in weeks, days, hours, minutes or seconds (P30D, PT2H)`,
    );
  }
  const match = DURATION.exec(trimmed);
  if (match === null || trimmed === 'P' || trimmed.endsWith('T')) {
    throw new TimeTextError(`${shown(text)} is not an ISO 8601 duration such as PT1H, PT30M or P1DT12H`);
  }
  const [, weeks, days, hours, minutes, seconds] = match;
  const ms =
    ((Number(weeks ?? 0) * 7 + Number(days ?? 0)) * 24 * 3600 +
      Number(hours ?? 0) * 3600 +
      Number(minutes ?? 0) * 60 +
      Number((seconds ?? '0').replace(',', '.'))) *
    1000;
  if (!(ms > 0)) throw new TimeTextError(`${shown(text)} is an empty duration; a window must last some time`);
  return Math.round(ms);
}

/** An ISO 8601 interval: `start/duration` (`2026-12-10T15:00:00Z/PT1H`) or `start/end` (`2026-12-10T15:00:00Z/2026-12-10T16:00:00Z`). */
export function parseInterval(text: string): TimeInterval {
  const parts = text.trim().split('/');
  const form =
    'write start/duration or start/end, such as 2026-12-10T15:00:00Z/PT1H or 2026-12-10T15:00:00Z/2026-12-10T16:00:00Z';
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '')
    throw new TimeTextError(`${shown(text)} is not an interval: ${form}`);
  const [first, second] = parts as [string, string];
  if (first.trim().toUpperCase().startsWith('P'))
    throw new TimeTextError(`${shown(text)}: a window starts with its start instant; ${form}`);
  const start = parseInstant(first);
  const end = second.trim().toUpperCase().startsWith('P') ? start + parseIsoDuration(second) : parseInstant(second);
  if (end <= start)
    throw new TimeTextError(
      `${shown(text)} ends before it starts; the end must come after ${new Date(start).toISOString()}`,
    );
  return { start, end };
}

/** A comma-separated list of intervals, each read by parseInterval; in the order written. */
export function parseIntervals(text: string): TimeInterval[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 1 && entries[0] === '') return [];
  return entries.map((entry, index) => {
    if (entry === '') throw new TimeTextError(`window ${index + 1} is empty; separate the windows with single commas`);
    try {
      return parseInterval(entry);
    } catch (error) {
      if (error instanceof TimeTextError && entries.length > 1)
        throw new TimeTextError(`window ${index + 1}: ${error.message}`);
      throw error;
    }
  });
}

const AGO = /^(\d{1,9})([smhdw])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/**
 * Where a "since" starts: a duration back from `now` (`7d`, `24h`, `30m`, `90s`, `2w`), an ISO
 * 8601 instant with its zone, or a date (`2026-12-01`, midnight UTC). In ms since the epoch.
 */
export function parseSince(text: string, now: number): number {
  const trimmed = text.trim();
  const how =
    'write a duration back from now such as 7d, 24h or 30m (s, m, h, d, w), or an ISO 8601 timestamp such as 2026-12-01T00:00:00Z';
  const ago = AGO.exec(trimmed);
  if (ago !== null) {
    const since = now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
    if (since < 0) throw new TimeTextError(`${shown(text)} reaches back before 1970; ${how}`);
    return since;
  }
  const date = DATE_ONLY.exec(trimmed);
  if (date !== null) {
    const utc = utcOf(Number(date[1]), Number(date[2]), Number(date[3]));
    if (utc === null) throw new TimeTextError(`${shown(text)} names no real date; ${how}`);
    return utc;
  }
  if (/^\d{4}-/.test(trimmed)) {
    try {
      return parseInstant(trimmed);
    } catch (error) {
      if (error instanceof TimeTextError) throw new TimeTextError(`${error.message}; ${how}`);
      throw error;
    }
  }
  throw new TimeTextError(`${shown(text)} is not a time to count from: ${how}`);
}

/** RFC 9110's IMF-fixdate (`Thu, 31 Dec 2026 23:59:59 GMT`), the HTTP-date of the Sunset header; whole seconds. */
export function imfFixdate(ms: number): string {
  // toUTCString writes exactly this form for years 1000 to 9999 (parseInstant allows 1970 to 9999).
  return new Date(ms).toUTCString();
}

/** RFC 9745's Deprecation value: a structured-field Date, `@` and the Unix seconds. */
export function structuredDate(ms: number): string {
  return `@${Math.floor(ms / 1000)}`;
}

/** An instant as ISO 8601 UTC, whole seconds without their `.000` (`2026-12-31T23:59:59Z`); a fraction is kept. */
export function instantText(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

const SPAN_UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
] as const;

/**
 * A length of time for people, its two largest units, rounded down (`32 d 4 h`, `3 h 5 min`,
 * `12 min 3 s`, `45 s`); a unit that is zero after a larger one is left out (`2 d`), and anything
 * under a second is `0 s`. The sign is ignored: the caller says "in" or "ago".
 */
export function spanText(ms: number): string {
  let rest = Math.floor(Math.abs(ms) / 1000) * 1000;
  const parts: string[] = [];
  for (const [unit, size] of SPAN_UNITS) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (parts.length > 0) {
      if (count > 0) parts.push(`${count} ${unit}`);
      break;
    }
    if (count > 0) parts.push(`${count} ${unit}`);
  }
  return parts.length === 0 ? '0 s' : parts.join(' ');
}
