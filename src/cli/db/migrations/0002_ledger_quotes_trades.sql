-- The trading book: per-org trading settings, the double-entry ledger, quotes and trades.
-- Every timestamp that a cursor list sorts by is timestamptz(3): cursors carry milliseconds.

ALTER TABLE org_environments
  ADD COLUMN committed_usd        numeric(38, 18) NOT NULL DEFAULT 0 CHECK (committed_usd >= 0),
  ADD COLUMN disabled_currencies  text[] NOT NULL DEFAULT '{}',
  ADD COLUMN disabled_pairs       text[] NOT NULL DEFAULT '{}';
-- committed_usd never exceeds the credit line: the conditional update that reserves credit for a
-- trade relies on this check too, so two racing trades cannot both take the last of the line.
ALTER TABLE org_environments ADD CONSTRAINT committed_within_credit_line CHECK (committed_usd <= credit_line_usd);

-- Ledger accounts. Client accounts are the org's balances (their id is the v3 balance id);
-- house accounts are the service's side of the same org's book: liquidity (the counterparty of
-- every trade) and rails in transit (deposits and withdrawals on their way). Keeping the house
-- side per org keeps one org's trades from contending with another's on a shared row.
CREATE TABLE ledger_accounts (
  id           text PRIMARY KEY,
  org_id       uuid NOT NULL,
  environment  text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('client', 'liquidity', 'rail_in_transit')),
  currency     text NOT NULL REFERENCES currencies(code),
  balance      numeric(38, 18) NOT NULL DEFAULT 0,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  updated_at   timestamptz(3) NOT NULL DEFAULT now(),
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  UNIQUE (org_id, environment, kind, currency)
);

-- One balanced movement: the entries of a transaction sum to zero per currency.
CREATE TABLE ledger_transactions (
  id            text PRIMARY KEY,
  org_id        uuid NOT NULL,
  environment   text NOT NULL,
  kind          text NOT NULL,
  reference_id  text NOT NULL,
  created_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX ledger_transactions_reference_idx ON ledger_transactions (reference_id);

CREATE TABLE ledger_entries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id  text NOT NULL REFERENCES ledger_transactions(id),
  account_id      text NOT NULL REFERENCES ledger_accounts(id),
  currency        text NOT NULL REFERENCES currencies(code),
  amount          numeric(38, 18) NOT NULL CHECK (amount <> 0)
);
CREATE INDEX ledger_entries_account_idx ON ledger_entries (account_id);
CREATE INDEX ledger_entries_transaction_idx ON ledger_entries (transaction_id);

CREATE TABLE quotes (
  id                 text PRIMARY KEY,
  org_id             uuid NOT NULL,
  environment        text NOT NULL,
  buy_currency       text NOT NULL REFERENCES currencies(code),
  sell_currency      text NOT NULL REFERENCES currencies(code),
  buy_amount         numeric(38, 18) NOT NULL CHECK (buy_amount > 0),
  sell_amount        numeric(38, 18) NOT NULL CHECK (sell_amount > 0),
  amount_currency    text NOT NULL,
  rate               numeric(38, 18) NOT NULL CHECK (rate > 0),
  mid_rate           numeric(38, 18) NOT NULL CHECK (mid_rate > 0),
  spread_bps         integer NOT NULL CHECK (spread_bps >= 0),
  -- USD value of the sell amount when quoted: what the trade will commit of the credit line.
  sell_usd_value     numeric(38, 18) NOT NULL CHECK (sell_usd_value >= 0),
  reverses_trade_id  text,
  actor_key          text NOT NULL,
  created_at         timestamptz(3) NOT NULL,
  expires_at         timestamptz(3) NOT NULL,
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  CHECK (buy_currency <> sell_currency),
  CHECK (amount_currency IN (buy_currency, sell_currency)),
  CHECK (expires_at > created_at)
);

CREATE TABLE trades (
  id                    text PRIMARY KEY,
  org_id                uuid NOT NULL,
  environment           text NOT NULL,
  -- A quote executes once, whatever Idempotency-Key the client sends.
  quote_id              text NOT NULL UNIQUE REFERENCES quotes(id),
  -- Defence in depth behind the idempotency store: one trade per key, even if Redis forgot it.
  idempotency_key       text NOT NULL,
  request_fingerprint   text NOT NULL,
  buy_currency          text NOT NULL REFERENCES currencies(code),
  sell_currency         text NOT NULL REFERENCES currencies(code),
  buy_amount            numeric(38, 18) NOT NULL CHECK (buy_amount > 0),
  sell_amount           numeric(38, 18) NOT NULL CHECK (sell_amount > 0),
  referenced_currency   text NOT NULL,
  referenced_amount     numeric(38, 18) NOT NULL,
  rate                  numeric(38, 18) NOT NULL,
  sell_usd_value        numeric(38, 18) NOT NULL,
  status                text NOT NULL CHECK (status IN ('EXECUTED', 'SETTLED', 'REVERSED')),
  client_reference_id   text,
  original_trade_id     text REFERENCES trades(id),
  reversed_by_trade_id  text REFERENCES trades(id),
  source                text NOT NULL DEFAULT 'API',
  actor_id              text NOT NULL,
  metadata              jsonb NOT NULL DEFAULT '{}',
  created_at            timestamptz(3) NOT NULL,
  updated_at            timestamptz(3) NOT NULL,
  settled_at            timestamptz(3),
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  UNIQUE (org_id, environment, idempotency_key)
);
CREATE INDEX trades_list_idx ON trades (org_id, environment, created_at DESC, id DESC);
CREATE INDEX trades_unsettled_idx ON trades (org_id, environment, sell_currency) WHERE status = 'EXECUTED';

-- Sandbox books start with a credit line so that a newcomer can trade at once; live books start
-- with none until an operator sets one (`fxgate orgs set-credit-line`).
ALTER TABLE org_environments ALTER COLUMN credit_line_usd SET DEFAULT 0;
UPDATE org_environments SET credit_line_usd = 1000000 WHERE environment = 'sandbox' AND credit_line_usd = 0;
