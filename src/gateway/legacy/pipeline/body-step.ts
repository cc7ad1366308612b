/**
 * Step 3b of a legacy write: its body, read from the raw bytes with every amount taken from its
 * JSON text (lossless-json.ts), then checked and translated by the operation's compiled request
 * reader (transforms/request-body.ts). Any failure is VALIDATION_BODY_FAILED: the legacy 400.
 */
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../../../lib/errors/api-error.js';
import { LegacyJsonParseError } from '../../../lib/errors/internal-errors.js';
import { decodeUtf8, INVALID_UTF8_MESSAGE, UNSTORABLE_TEXT_CODE } from '../../../lib/text.js';
import { parseLegacyJson } from '../runtime/lossless-json.js';
import type { ReadBody, ReadRequest } from '../transforms/request-body.js';

export function rawBodyOf(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
}

export function readLegacyBody(raw: Buffer, amountPaths: readonly string[], read: ReadRequest): ReadBody {
  if (raw.length === 0)
    throw new ApiError('VALIDATION_BODY_FAILED', {
      issues: [{ path: '', code: 'invalid_json', message: 'a JSON object body is required' }],
    });
  const text = decodeUtf8(raw);
  if (text === null)
    throw new ApiError('VALIDATION_BODY_FAILED', {
      issues: [{ path: '', code: UNSTORABLE_TEXT_CODE, message: INVALID_UTF8_MESSAGE }],
    });
  let body: unknown;
  try {
    body = parseLegacyJson(text, amountPaths);
  } catch (error) {
    if (error instanceof LegacyJsonParseError) {
      throw new ApiError(
        'VALIDATION_BODY_FAILED',
        { issues: [{ path: error.location, code: error.reason.toLowerCase(), message: error.message }] },
        { cause: error },
      );
    }
    throw error;
  }
  return read(body);
}
