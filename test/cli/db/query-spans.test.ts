/**
 * statementNames: a statement's span is named by its operation and first table, read from the
 * statement's fixed text; a literal or a parameter never reaches the name.
 */
import { describe, expect, it } from 'vitest';

import { statementNames } from '../../../src/cli/db/query-spans.js';

describe('statementNames', () => {
  it('names a statement by its operation and the first table it reads or writes', () => {
    expect(statementNames('SELECT * FROM trades WHERE id = $1')).toEqual({
      operation: 'SELECT',
      summary: 'SELECT trades',
    });
    expect(statementNames('insert into api_keys (id) values ($1)')).toEqual({
      operation: 'INSERT',
      summary: 'INSERT api_keys',
    });
    expect(statementNames('UPDATE webhook_deliveries SET status = $2 WHERE id = $1')).toMatchObject({
      summary: 'UPDATE webhook_deliveries',
    });
    expect(statementNames('DELETE FROM public.nonces WHERE id = $1')).toMatchObject({
      summary: 'DELETE public.nonces',
    });
    expect(statementNames('SELECT 1')).toEqual({ operation: 'SELECT', summary: 'SELECT' });
  });

  it('names a CTE by the write it makes, else as a read', () => {
    expect(statementNames('WITH moved AS (UPDATE balances SET x = 1 RETURNING *) SELECT * FROM moved')).toMatchObject({
      operation: 'UPDATE',
    });
    expect(statementNames('WITH t AS (SELECT id FROM trades) SELECT count(*) FROM t')).toEqual({
      operation: 'SELECT',
      summary: 'SELECT trades',
    });
  });

  it('keeps only keywords and identifiers: no literal of the text reaches the name', () => {
    const names = statementNames(`-- a comment\nSELECT '4321.77' AS amount FROM ledger_entries WHERE org_id = 'org_1'`);
    expect(names).toEqual({ operation: 'SELECT', summary: 'SELECT ledger_entries' });
    expect(statementNames(`SELECT 'rows from elsewhere' AS note FROM trades`)).toMatchObject({
      summary: 'SELECT trades',
    });
    expect(statementNames('VACUUM something')).toEqual({ operation: 'QUERY', summary: 'QUERY' });
  });
});
