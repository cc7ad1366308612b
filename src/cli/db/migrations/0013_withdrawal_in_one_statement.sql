-- Withdrawal creation as one statement, as migration 0005 made a trade one. A withdrawal was
-- eleven round trips (the idempotency look-up, BEGIN, the account lock, the balance lock, the
-- look-up again, the debts, the insert, the ledger movement, the event and its deliveries,
-- COMMIT), with the book's client account locked across most of them: every round trip cost a
-- socket write on both sides, and withdrawals of one currency waited for all of them. The same
-- steps, in the same order and under the same locks, now run in one function call, its own
-- transaction.
--
-- The rules that need the application (the reference data, the checksums, the USD prices that
-- rank debts) are judged by it from the account as it read it just before; the function locks the
-- account and refuses with ACCOUNT_CHANGED when the fields those rules read have changed since,
-- and the application reads it again. Refusals are SQLSTATE FXR01 as in 0005, the reason as the
-- message and the facts as JSON in DETAIL (src/core/money-movement/withdrawals.ts turns them into
-- catalogued errors); FXF01 is a failpoint a test armed (src/lib/failpoints.ts).

-- Fails the statement here when a test armed this failpoint (p_armed is null otherwise).
CREATE FUNCTION fx_failpoint(p_armed text, p_here text) RETURNS void LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_armed = p_here THEN
    RAISE EXCEPTION USING ERRCODE = 'FXF01', MESSAGE = p_here;
  END IF;
END
$$;

-- Records an event and fans it out to one delivery per subscribed, active endpoint of its book.
CREATE FUNCTION fx_record_event(
  p_id text, p_org_id uuid, p_environment text, p_type text, p_event_type text, p_data jsonb, p_at timestamptz
) RETURNS void LANGUAGE sql VOLATILE AS $$
  INSERT INTO events (id, org_id, environment, type, event_type, data, created_at)
  VALUES (p_id, p_org_id, p_environment, p_type, p_event_type, p_data, p_at);
  INSERT INTO webhook_deliveries (event_id, endpoint_id, status, next_attempt_at, created_at)
  SELECT p_id, e.id, 'PENDING', p_at, p_at FROM webhook_endpoints e
   WHERE e.org_id = p_org_id AND e.environment = p_environment AND e.status = 'ACTIVE'
     AND (cardinality(e.event_types) = 0 OR p_event_type = ANY(e.event_types));
$$;

-- Creates a PENDING withdrawal and returns it with replayed = false, or returns the withdrawal an
-- earlier request with this Idempotency-Key made (as it is now) with replayed = true. The steps:
--   1. an earlier withdrawal with the key answers at once;
--   2. lock the account; its status, verified and withdrawals_enabled must be what the caller
--      judged rules 1 to 6, 9 and 10 on (p_account_*, all null for an account the book has not);
--   3. the caller's refusal under rules 1 to 6, if it has one;
--   4. lock the book's client account in the currency, then look the key up again: under READ
--      COMMITTED this statement sees a withdrawal a racing attempt with the key committed while
--      this one waited for the lock, and that withdrawal is this request's answer;
--   5. rule 7, the amount within the withdrawable balance (the client balance, never below 0);
--   6. rule 8, no client balance of the book below 0 (the caller names the largest debt);
--   7. the caller's refusal under rules 9 and 10, if it has one;
--   8. insert the withdrawal, post the hold (client -amount, withdrawal_hold +amount) and record
--      the event withdrawal.pending.
CREATE FUNCTION fx_create_withdrawal(
  p_id text, p_org_id uuid, p_environment text, p_account_id text,
  p_account_status text, p_account_verified boolean, p_account_withdrawals_enabled boolean,
  p_refuse_before_balance boolean, p_refuse_after_debts boolean,
  p_currency text, p_asset_type text, p_amount numeric, p_network text, p_actor_id text, p_actor_email text,
  p_comments text, p_metadata jsonb, p_idempotency_key text, p_request_fingerprint text, p_at timestamptz,
  p_transaction_id text, p_new_account_ids text[], p_event_id text, p_event_type text, p_event_data jsonb,
  p_failpoint text
) RETURNS TABLE (withdrawal withdrawals, replayed boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_account withdrawal_accounts;
  v_balance numeric;
  v_debts json;
  v_withdrawal withdrawals;
BEGIN
  RETURN QUERY SELECT w, true FROM withdrawals w
   WHERE w.org_id = p_org_id AND w.environment = p_environment AND w.idempotency_key = p_idempotency_key;
  IF FOUND THEN RETURN; END IF;

  SELECT * INTO v_account FROM withdrawal_accounts
   WHERE id = p_account_id AND org_id = p_org_id AND environment = p_environment
     FOR UPDATE;
  IF ROW(v_account.status, v_account.verified, v_account.withdrawals_enabled)
     IS DISTINCT FROM ROW(p_account_status, p_account_verified, p_account_withdrawals_enabled) THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'ACCOUNT_CHANGED';
  END IF;
  IF p_refuse_before_balance THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'REFUSED';
  END IF;

  SELECT balance INTO v_balance FROM ledger_accounts
   WHERE org_id = p_org_id AND environment = p_environment AND kind = 'client' AND currency = p_currency
     FOR UPDATE;
  RETURN QUERY SELECT w, true FROM withdrawals w
   WHERE w.org_id = p_org_id AND w.environment = p_environment AND w.idempotency_key = p_idempotency_key;
  IF FOUND THEN RETURN; END IF;

  IF p_amount > GREATEST(COALESCE(v_balance, 0), 0) THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'INSUFFICIENT_BALANCE',
      DETAIL = json_build_object('balance', COALESCE(v_balance, 0)::text)::text;
  END IF;
  SELECT json_agg(json_build_object('currency', currency, 'balance', balance::text) ORDER BY currency COLLATE "C")
    INTO v_debts
    FROM ledger_accounts
   WHERE org_id = p_org_id AND environment = p_environment AND kind = 'client' AND balance < 0;
  IF v_debts IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'DEBTS', DETAIL = v_debts::text;
  END IF;
  IF p_refuse_after_debts THEN
    RAISE EXCEPTION USING ERRCODE = 'FXR01', MESSAGE = 'REFUSED';
  END IF;

  INSERT INTO withdrawals (id, org_id, environment, withdrawal_account_id, currency, asset_type, amount, status, network,
                           transaction_hash, payment_details, estimated_completion_at, failure_reason, actor_id,
                           actor_email, comments, metadata, idempotency_key, request_fingerprint, created_at, updated_at,
                           completed_at)
  VALUES (p_id, p_org_id, p_environment, p_account_id, p_currency, p_asset_type, p_amount, 'PENDING', p_network,
          NULL, '{}', NULL, NULL, p_actor_id, p_actor_email, p_comments, p_metadata, p_idempotency_key,
          p_request_fingerprint, p_at, p_at, NULL)
  RETURNING * INTO v_withdrawal;
  PERFORM fx_failpoint(p_failpoint, 'withdrawal.after-insert');

  PERFORM fx_post_movement(p_org_id, p_environment, 'withdrawal_hold', p_id, p_at, p_transaction_id, p_new_account_ids,
                           ARRAY['client', 'withdrawal_hold'], ARRAY[p_currency, p_currency], ARRAY[-p_amount, p_amount]);
  PERFORM fx_failpoint(p_failpoint, 'withdrawal.after-ledger');

  PERFORM fx_record_event(p_event_id, p_org_id, p_environment, 'withdrawals', p_event_type, p_event_data, p_at);
  PERFORM fx_failpoint(p_failpoint, 'withdrawal.after-event');

  RETURN QUERY SELECT v_withdrawal, false;
END
$$;
