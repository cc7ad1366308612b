-- Trade execution as one statement. A trade used to be five round trips (BEGIN, claim and
-- insert, ledger movement, credit reservation, COMMIT); on a 2-core machine each round trip costs
-- a socket write and a wake-up on both sides, and profiles of the trade benchmark showed those
-- writes as the largest share of CPU. The same steps, in the same order and under the same locks,
-- now run inside one function call, which is its own transaction: all of it commits or none does.
--
-- What the steps refuse is raised with SQLSTATE FXR01, the reason as the message and the facts
-- the API error needs as JSON in DETAIL; the application turns them into catalogued errors
-- (src/core/trading/trades.ts). SQLSTATE FXF01 is a failpoint a test armed (src/lib/failpoints.ts).

-- Whether a book may trade buying p_buy with p_sell: trading on, neither currency disabled, the
-- pair ('BUY/SELL') not disabled. The application's assertTradingAllowed says which refusal
-- applies; a test holds the two to the same answer.
CREATE FUNCTION fx_trading_allowed(p_trading_enabled boolean, p_disabled_currencies text[], p_disabled_pairs text[], p_buy text, p_sell text)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT p_trading_enabled
     AND NOT (p_buy = ANY(p_disabled_currencies) OR p_sell = ANY(p_disabled_currencies))
     AND NOT ((p_buy || '/' || p_sell) = ANY(p_disabled_pairs))
$$;

-- One balanced ledger movement (src/core/ledger/ledger.ts checks the balance before calling):
-- creates missing accounts, adds to their balances, writes the transaction and its entries, and
-- returns each account's new balance. Accounts are taken in (kind, currency) byte order, so
-- concurrent movements lock the same rows in the same order and cannot deadlock.
CREATE FUNCTION fx_post_movement(
  p_org_id uuid, p_environment text, p_kind text, p_reference_id text, p_at timestamptz, p_transaction_id text,
  p_new_account_ids text[], p_account_kinds text[], p_currencies text[], p_amounts numeric[]
) RETURNS TABLE (account_kind text, account_currency text, account_balance numeric)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_new_account_ids, p_account_kinds, p_currencies, p_amounts) AS i(new_id, kind, currency, amount)
  ),
  accounts AS (
    INSERT INTO ledger_accounts AS a (id, org_id, environment, kind, currency, balance, created_at, updated_at)
    SELECT input.new_id, p_org_id, p_environment, input.kind, input.currency, input.amount, p_at, p_at
      FROM input ORDER BY input.kind COLLATE "C", input.currency COLLATE "C"
    ON CONFLICT (org_id, environment, kind, currency)
    DO UPDATE SET balance = a.balance + EXCLUDED.balance, updated_at = EXCLUDED.updated_at
    RETURNING a.id, a.kind, a.currency, a.balance
  ),
  transaction AS (
    INSERT INTO ledger_transactions (id, org_id, environment, kind, reference_id, created_at)
    VALUES (p_transaction_id, p_org_id, p_environment, p_kind, p_reference_id, p_at)
    RETURNING id
  ),
  entries AS (
    INSERT INTO ledger_entries (transaction_id, account_id, currency, amount)
    SELECT transaction.id, accounts.id, input.currency, input.amount
      FROM input JOIN accounts ON accounts.kind = input.kind AND accounts.currency = input.currency CROSS JOIN transaction
     ORDER BY input.kind COLLATE "C", input.currency COLLATE "C"
  )
  SELECT accounts.kind, accounts.currency, accounts.balance FROM accounts;
END
$$;

-- Executes a quote as a trade (or, with p_reverses_trade_id, as the reversal of that trade) and
-- returns the trade with the org's new balance in the sold currency. The steps, in order:
--   1. claim the quote, only if it is this book's and unclaimed (under READ COMMITTED a claim
--      that waited for a racing one re-checks the condition on the committed row, so a quote is
--      executed at most once), and insert the trade with the quote's terms;
--   2. refuse a quote that reverses another trade than this one, an expired quote, and a book
--      that may not trade the pair;
--   3. post the ledger movement;
--   4. reserve the trade's USD value on the credit line, only if it stays within the line (a
--      reversal closes a position and reserves nothing).
-- The rows every trade of a book contends on (its accounts, its credit) are touched last, so
-- they stay locked only for the end of the statement and the commit.
CREATE FUNCTION fx_execute_trade(
  p_trade_id text, p_org_id uuid, p_environment text, p_quote_id text, p_idempotency_key text, p_request_fingerprint text,
  p_reverses_trade_id text, p_client_reference_id text, p_actor_id text, p_metadata jsonb, p_at timestamptz,
  p_transaction_id text, p_new_account_ids text[], p_failpoint text
) RETURNS TABLE (trade trades, sell_balance numeric)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_quote quotes;
  v_trade trades;
  v_book org_environments;
  v_sell_balance numeric;
BEGIN
  UPDATE quotes q SET used_by_trade_id = p_trade_id
   WHERE q.id = p_quote_id AND q.org_id = p_org_id AND q.environment = p_environment AND q.used_by_trade_id IS NULL
  RETURNING q.* INTO v_quote;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'QUOTE_UNCLAIMABLE';
  END IF;

  INSERT INTO trades (id, org_id, environment, quote_id, idempotency_key, request_fingerprint, buy_currency, sell_currency,
                      buy_amount, sell_amount, referenced_currency, referenced_amount, rate, sell_usd_value, status,
                      client_reference_id, original_trade_id, source, actor_id, metadata, created_at, updated_at)
  VALUES (p_trade_id, p_org_id, p_environment, v_quote.id, p_idempotency_key, p_request_fingerprint, v_quote.buy_currency,
          v_quote.sell_currency, v_quote.buy_amount, v_quote.sell_amount, v_quote.amount_currency,
          CASE WHEN v_quote.amount_currency = v_quote.buy_currency THEN v_quote.buy_amount ELSE v_quote.sell_amount END,
          v_quote.rate, v_quote.sell_usd_value, CASE WHEN p_reverses_trade_id IS NULL THEN 'EXECUTED' ELSE 'REVERSED' END,
          p_client_reference_id, p_reverses_trade_id, 'API', p_actor_id, p_metadata, p_at, p_at)
  RETURNING * INTO v_trade;

  IF v_quote.reverses_trade_id IS DISTINCT FROM p_reverses_trade_id THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'REVERSE_QUOTE_INVALID',
      DETAIL = json_build_object('quoteReversesTradeId', v_quote.reverses_trade_id)::text;
  END IF;
  IF v_quote.expires_at <= p_at THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'QUOTE_EXPIRED',
      DETAIL = json_build_object('expiresAtMs', (extract(epoch FROM v_quote.expires_at) * 1000)::bigint::text)::text;
  END IF;
  SELECT * INTO v_book FROM org_environments WHERE org_id = p_org_id AND environment = p_environment;
  IF NOT fx_trading_allowed(v_book.trading_enabled, v_book.disabled_currencies, v_book.disabled_pairs, v_quote.buy_currency, v_quote.sell_currency) THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'TRADING_NOT_ALLOWED',
      DETAIL = json_build_object('tradingEnabled', v_book.trading_enabled, 'disabledCurrencies', v_book.disabled_currencies,
                                 'disabledPairs', v_book.disabled_pairs, 'buyCurrency', v_quote.buy_currency,
                                 'sellCurrency', v_quote.sell_currency)::text;
  END IF;
  IF p_failpoint = 'trade.after-insert' THEN
    RAISE EXCEPTION USING ERRCODE = 'FXF01', MESSAGE = p_failpoint;
  END IF;

  SELECT m.account_balance INTO v_sell_balance
    FROM fx_post_movement(p_org_id, p_environment, CASE WHEN p_reverses_trade_id IS NULL THEN 'trade' ELSE 'reversal' END,
                          p_trade_id, p_at, p_transaction_id, p_new_account_ids,
                          ARRAY['client', 'liquidity', 'client', 'liquidity'],
                          ARRAY[v_trade.buy_currency, v_trade.buy_currency, v_trade.sell_currency, v_trade.sell_currency],
                          ARRAY[v_trade.buy_amount, -v_trade.buy_amount, -v_trade.sell_amount, v_trade.sell_amount]) AS m
   WHERE m.account_kind = 'client' AND m.account_currency = v_trade.sell_currency;
  IF p_failpoint = 'trade.after-ledger' THEN
    RAISE EXCEPTION USING ERRCODE = 'FXF01', MESSAGE = p_failpoint;
  END IF;

  IF p_reverses_trade_id IS NULL THEN
    UPDATE org_environments SET committed_usd = committed_usd + v_trade.sell_usd_value, updated_at = now()
     WHERE org_id = p_org_id AND environment = p_environment AND committed_usd + v_trade.sell_usd_value <= credit_line_usd;
    IF NOT FOUND THEN
      SELECT * INTO v_book FROM org_environments WHERE org_id = p_org_id AND environment = p_environment;
      RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'CREDIT_LIMIT_EXCEEDED',
        DETAIL = json_build_object('creditLine', v_book.credit_line_usd::text, 'committed', v_book.committed_usd::text,
                                   'required', v_trade.sell_usd_value::text)::text;
    END IF;
  END IF;
  IF p_failpoint = 'trade.after-credit' THEN
    RAISE EXCEPTION USING ERRCODE = 'FXF01', MESSAGE = p_failpoint;
  END IF;

  RETURN QUERY SELECT v_trade, v_sell_balance;
END
$$;
