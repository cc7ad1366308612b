/**
 * When two values of a legacy field mean the same, by the field's declared type: amounts as
 * decimal values (12.3 equals "12.30"; 12.301 does not), timestamps to the millisecond, ids
 * without regard to case, everything else exactly. Part of the comparison tools of the
 * migration; amounts are read from the answer's text, never through a JS number.
 */
import { isLosslessNumber, parse, stringify } from 'lossless-json';

import { Decimal } from '../../lib/money.js';
import type { FieldType } from '../legacy/declarations/record-shapes.js';

/** A legacy answer's JSON with every number kept as its text (LosslessNumber). Throws SyntaxError. */
export function parseLegacyAnswer(text: string): unknown {
  return parse(text);
}

/** A value as it is written in JSON text, for reports: numbers with their own digits. */
export function legacyValueText(value: unknown): string {
  if (value === undefined) return '(absent)';
  return stringify(value) ?? String(value);
}

/** A number or decimal text as a Decimal; null for anything else. */
export function decimalOf(value: unknown): Decimal | null {
  const text = isLosslessNumber(value)
    ? value.value
    : typeof value === 'string'
      ? value
      : typeof value === 'number' && Number.isFinite(value)
        ? String(value)
        : null;
  if (text === null) return null;
  const decimal = new Decimal(text);
  return decimal.isFinite() ? decimal : null;
}

function timestampOf(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Whether `a` and `b` mean the same value of a field of this type. */
export function sameLegacyValue(type: FieldType, a: unknown, b: unknown): boolean {
  if (a === null || b === null || a === undefined || b === undefined) return a === b;
  switch (type) {
    case 'amount':
    case 'integer': {
      const left = decimalOf(a);
      const right = decimalOf(b);
      return left !== null && right !== null && left.eq(right);
    }
    case 'timestamp': {
      const left = timestampOf(a);
      return left !== null && left === timestampOf(b);
    }
    case 'id':
      return typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase();
    default:
      return a === b;
  }
}
