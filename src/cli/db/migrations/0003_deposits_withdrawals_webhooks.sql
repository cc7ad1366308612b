-- Money movement: deposits, withdrawal accounts, withdrawals, and signed webhooks through an
-- outbox. Every money row carries its Idempotency-Key under a unique constraint.

-- A withdrawal's amount is held from creation until it completes (to the rail) or fails
-- (back to the client): the hold is its own account, so balances stay exact at every step.
ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('client', 'liquidity', 'rail_in_transit', 'withdrawal_hold'));

CREATE TABLE deposits (
  id                   text PRIMARY KEY,
  org_id               uuid NOT NULL,
  environment          text NOT NULL,
  currency             text NOT NULL REFERENCES currencies(code),
  amount               numeric(38, 18) NOT NULL CHECK (amount > 0),
  -- FIAT for fiat deposits, else the chain the stablecoin arrived on.
  network              text NOT NULL,
  status               text NOT NULL CHECK (status IN ('PENDING', 'COMPLETED', 'FAILED')),
  transaction_hash     text,
  reference_id         text,
  comments             text,
  -- When a PENDING deposit completes by itself (sandbox deposits with a delay).
  completes_at         timestamptz(3),
  idempotency_key      text NOT NULL,
  request_fingerprint  text NOT NULL,
  created_at           timestamptz(3) NOT NULL,
  updated_at           timestamptz(3) NOT NULL,
  completed_at         timestamptz(3),
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  UNIQUE (org_id, environment, idempotency_key)
);
CREATE INDEX deposits_list_idx ON deposits (org_id, environment, created_at DESC, id DESC);
CREATE INDEX deposits_due_idx ON deposits (completes_at) WHERE status = 'PENDING';

CREATE TABLE withdrawal_accounts (
  id                   text PRIMARY KEY,
  org_id               uuid NOT NULL,
  environment          text NOT NULL,
  currency             text NOT NULL REFERENCES currencies(code),
  asset_type           text NOT NULL CHECK (asset_type IN ('FIAT', 'STABLECOIN')),
  account_name         text NOT NULL,
  status               text NOT NULL CHECK (status IN ('PENDING_VERIFICATION', 'ACTIVE', 'DISABLED')),
  verified             boolean NOT NULL DEFAULT false,
  withdrawals_enabled  boolean NOT NULL DEFAULT true,
  -- FIAT
  transfer_type        text CHECK (transfer_type IN ('FEDWIRE', 'SWIFT')),
  bank_name            text,
  account_number       text,
  routing_number       text,
  swift_code           text,
  memo                 text,
  -- STABLECOIN
  network              text,
  address              text,
  comments             text,
  creator_actor_id     text NOT NULL,
  idempotency_key      text NOT NULL,
  request_fingerprint  text NOT NULL,
  created_at           timestamptz(3) NOT NULL,
  updated_at           timestamptz(3) NOT NULL,
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  UNIQUE (org_id, environment, idempotency_key),
  CHECK ((asset_type = 'FIAT') = (transfer_type IS NOT NULL)),
  CHECK ((asset_type = 'STABLECOIN') = (network IS NOT NULL AND address IS NOT NULL))
);
CREATE INDEX withdrawal_accounts_org_idx ON withdrawal_accounts (org_id, environment, created_at DESC, id DESC);

CREATE TABLE withdrawals (
  id                       text PRIMARY KEY,
  org_id                   uuid NOT NULL,
  environment              text NOT NULL,
  withdrawal_account_id    text NOT NULL REFERENCES withdrawal_accounts(id),
  currency                 text NOT NULL REFERENCES currencies(code),
  asset_type               text NOT NULL,
  amount                   numeric(38, 18) NOT NULL CHECK (amount > 0),
  status                   text NOT NULL CHECK (status IN ('PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  network                  text,
  transaction_hash         text,
  payment_details          jsonb NOT NULL DEFAULT '{}',
  estimated_completion_at  timestamptz(3),
  failure_reason           text,
  actor_id                 text NOT NULL,
  actor_email              text NOT NULL,
  comments                 text NOT NULL DEFAULT '',
  metadata                 jsonb NOT NULL DEFAULT '{}',
  idempotency_key          text NOT NULL,
  request_fingerprint      text NOT NULL,
  created_at               timestamptz(3) NOT NULL,
  updated_at               timestamptz(3) NOT NULL,
  completed_at             timestamptz(3),
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment),
  UNIQUE (org_id, environment, idempotency_key)
);
CREATE INDEX withdrawals_list_idx ON withdrawals (org_id, environment, created_at DESC, id DESC);
CREATE INDEX withdrawals_open_idx ON withdrawals (status) WHERE status IN ('PENDING', 'PROCESSING');

CREATE TABLE webhook_endpoints (
  id           text PRIMARY KEY,
  org_id       uuid NOT NULL,
  environment  text NOT NULL,
  url          text NOT NULL,
  -- Empty: every event type.
  event_types  text[] NOT NULL DEFAULT '{}',
  secret       text NOT NULL,
  status       text NOT NULL CHECK (status IN ('ACTIVE', 'DELETED')),
  created_at   timestamptz(3) NOT NULL,
  deleted_at   timestamptz(3),
  FOREIGN KEY (org_id, environment) REFERENCES org_environments(org_id, environment)
);
CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (org_id, environment) WHERE status = 'ACTIVE';

-- The outbox: events written in the same transaction as the state change they report.
CREATE TABLE events (
  id           text PRIMARY KEY,
  org_id       uuid NOT NULL,
  environment  text NOT NULL,
  type         text NOT NULL,
  event_type   text NOT NULL,
  data         jsonb NOT NULL,
  created_at   timestamptz(3) NOT NULL
);
CREATE INDEX events_org_idx ON events (org_id, environment, created_at DESC, id DESC);

-- One delivery per event and endpoint, fanned out when the event is written; workers claim due
-- rows with FOR UPDATE SKIP LOCKED, so any number of them can run.
CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         text NOT NULL REFERENCES events(id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id),
  status           text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'GAVE_UP')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz(3) NOT NULL,
  delivered_at     timestamptz(3),
  created_at       timestamptz(3) NOT NULL,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';

CREATE TABLE webhook_delivery_attempts (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES webhook_deliveries(id),
  attempted_at  timestamptz(3) NOT NULL,
  status_code   integer,
  error         text,
  duration_ms   integer NOT NULL
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id);
