/**
 * The v3 reference in Markdown, rendered from the v3 document: every operation with its scope,
 * parameters, body, success body and error codes by status, then every record field by field.
 */
import { describe, expect, it } from 'vitest';

import { operationErrorCodes } from '../../../src/core/http/pipeline-errors.js';
import { declaredCoreOperations } from '../../../src/core/openapi/declared-operations.js';
import { renderV3ApiReference } from '../../../src/core/openapi/v3-reference.js';
import { ERROR_CATALOG } from '../../../src/lib/errors/v3-error-catalog.js';
import { openApiPath } from '../../../src/lib/openapi/document.js';

const reference = renderV3ApiReference();

/** The section of one operation, up to the next heading. */
function sectionOf(method: string, path: string): string {
  const start = reference.indexOf(`### \`${method} ${path}\``);
  expect(start, `${method} ${path}`).toBeGreaterThanOrEqual(0);
  const end = reference.indexOf('\n### ', start + 1);
  return reference.slice(start, end === -1 ? undefined : end);
}

describe('renderV3ApiReference', () => {
  it('has a section for every operation, with its scope and every code it may answer under its status', () => {
    for (const operation of declaredCoreOperations()) {
      const section = sectionOf(operation.method, openApiPath(operation.path));
      expect(section).toContain(`Scope: \`${operation.scope}\`.`);
      for (const code of operationErrorCodes(operation)) {
        expect(section).toMatch(new RegExp(`^\\| ${ERROR_CATALOG[code].status} \\|.*\`${code}\``, 'm'));
      }
    }
  });

  it('lists the body of POST /v3/fx/trades and what it answers', () => {
    const trade = sectionOf('POST', '/v3/fx/trades');
    expect(trade).toContain('| `Idempotency-Key` | header | string | yes |');
    expect(trade).toContain('| `quoteId` | string | yes | 1 to 64 characters |');
    expect(trade).toContain('`data` is Trade.');
    expect(trade).toMatch(
      /^\| 409 \| `IDEMPOTENCY_IN_FLIGHT`, `QUOTE_EXPIRED`, `QUOTE_ALREADY_USED`, `TRADE_CREDIT_LIMIT_EXCEEDED` \|$/m,
    );
  });

  it('lists every record field by field, ids, decimals and timestamps by name', () => {
    const trade = reference.slice(
      reference.indexOf('### Trade\n'),
      reference.indexOf('\n### ', reference.indexOf('### Trade\n') + 1),
    );
    expect(trade).toContain('| `id` | trd_ id | yes |');
    expect(trade).toContain('| `buyAmount` | decimal string | yes |');
    expect(trade).toContain('| `settledAt` | timestamp or null | yes |');
    expect(trade).toContain('| `status` | `EXECUTED` \\| `SETTLED` \\| `REVERSED` | yes |');
  });
});

describe('renderV3ApiReference: the index and bodies of several shapes', () => {
  it('indexes every operation once, linked to its section, with its scope and whether it takes an Idempotency-Key', () => {
    const index = reference.slice(0, reference.indexOf('\n### '));
    for (const operation of declaredCoreOperations()) {
      const heading = `\`${operation.method} ${openApiPath(operation.path)}\``;
      const row = index.split('\n').filter((line) => line.startsWith(`| [${heading}](#`));
      expect(row, heading).toHaveLength(1);
      expect(row[0]).toContain(
        `| \`${operation.scope}\` | ${operation.method === 'POST' ? 'required' : ''} | ${operation.sandboxOnly ? 'yes' : ''} |`,
      );
    }
  });

  it('lists each shape of a body that is one of several, named by its fixed values', () => {
    const accounts = sectionOf('POST', '/v3/fx/withdrawal-accounts');
    expect(accounts).toContain('Body: one of 3 shapes.');
    expect(accounts).toContain('With `assetType` `"FIAT"`, `transferType` `"SWIFT"`:');
    expect(accounts).toContain('With `assetType` `"STABLECOIN"`:');
    expect(accounts).toMatch(/`swiftCode` \| string \| yes/);
  });
});
