-- Organisations, their two books (sandbox and live), API keys, currencies and tradable pairs.

CREATE TABLE orgs (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Sandbox and live are fully separate books of one org: each has its own credit line and
-- trading switch, and every later money table is keyed by (org_id, environment).
CREATE TABLE org_environments (
  org_id           uuid NOT NULL REFERENCES orgs(id),
  environment      text NOT NULL CHECK (environment IN ('sandbox', 'live')),
  credit_line_usd  numeric(38, 18) NOT NULL DEFAULT 0 CHECK (credit_line_usd >= 0),
  trading_enabled  boolean NOT NULL DEFAULT true,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, environment)
);

CREATE TABLE api_keys (
  name            text PRIMARY KEY CHECK (name ~ '^org/[0-9a-f-]{36}/apiKey/[0-9a-f-]{36}$'),
  id              uuid NOT NULL UNIQUE,
  org_id          uuid NOT NULL REFERENCES orgs(id),
  public_key_pem  text NOT NULL,
  scopes          text[] NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  ip_allowlist    text[] NOT NULL DEFAULT '{}',
  label           text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id);

-- Secrets the service makes for itself on first start (the cursor HMAC key), so that every
-- process of a deployment and every restart agree without an operator having to supply them.
CREATE TABLE service_secrets (
  name        text PRIMARY KEY,
  value       text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE currencies (
  code                 text PRIMARY KEY CHECK (code ~ '^[A-Z]{3,5}$'),
  name                 text NOT NULL,
  asset_type           text NOT NULL CHECK (asset_type IN ('FIAT', 'STABLECOIN')),
  decimals             integer NOT NULL CHECK (decimals BETWEEN 0 AND 8),
  networks             text[] NOT NULL DEFAULT '{}',
  withdrawals_enabled  boolean NOT NULL
);

INSERT INTO currencies (code, name, asset_type, decimals, networks, withdrawals_enabled) VALUES
  ('USD',  'US Dollar',     'FIAT',       2, '{}', true),
  ('EUR',  'Euro',          'FIAT',       2, '{}', true),
  ('GBP',  'Pound Sterling','FIAT',       2, '{}', true),
  ('JPY',  'Japanese Yen',  'FIAT',       0, '{}', false),
  ('USDC', 'USD Coin',      'STABLECOIN', 6, '{ETHEREUM,POLYGON,BASE,SOLANA}', true),
  ('USDT', 'Tether USD',    'STABLECOIN', 6, '{ETHEREUM,POLYGON,TRON,SOLANA}', true),
  ('EURC', 'Euro Coin',     'STABLECOIN', 6, '{ETHEREUM,BASE,SOLANA}', true);

-- A pair trades base against quote; min and max bound a trade's amount in the base currency.
CREATE TABLE pairs (
  base_currency    text NOT NULL REFERENCES currencies(code),
  quote_currency   text NOT NULL REFERENCES currencies(code),
  min_base_amount  numeric(38, 18) NOT NULL CHECK (min_base_amount > 0),
  max_base_amount  numeric(38, 18) NOT NULL,
  enabled          boolean NOT NULL DEFAULT true,
  PRIMARY KEY (base_currency, quote_currency),
  CHECK (base_currency <> quote_currency),
  CHECK (max_base_amount >= min_base_amount)
);

-- Every two currencies form a pair in both directions. Limits are about 1 to 1,000,000 USD
-- worth in the base currency; JPY's are scaled to its unit.
INSERT INTO pairs (base_currency, quote_currency, min_base_amount, max_base_amount)
SELECT b.code, q.code,
       CASE WHEN b.code = 'JPY' THEN 100 ELSE 1 END,
       CASE WHEN b.code = 'JPY' THEN 150000000 ELSE 1000000 END
FROM currencies b CROSS JOIN currencies q
WHERE b.code <> q.code;
