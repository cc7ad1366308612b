-- Legacy webhooks, delivered by the gateway (src/gateway/webhooks/): the integrators'
-- subscriptions, the gateway's own v3 webhook endpoint per org and mode, the v3 events it has
-- received, and its outbox of legacy deliveries. Secrets are stored sealed (src/lib/secrets/).

-- What an integrator asked for: the legacy events of one org and mode, POSTed to one URL and
-- signed with the subscription's own secret.
CREATE TABLE legacy_webhook_subscriptions (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL,
  mode        text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  url         text NOT NULL,
  -- Names of mappings/webhooks.ts (deposits, withdrawals, failed-deposits, failed-withdrawals).
  events      text[] NOT NULL CHECK (cardinality(events) > 0),
  -- Sealed, bound to the subscription id; shown once, when the subscription is added.
  secret      text NOT NULL,
  status      text NOT NULL CHECK (status IN ('ACTIVE', 'REMOVED')),
  created_at  timestamptz(3) NOT NULL,
  removed_at  timestamptz(3)
);
CREATE INDEX legacy_webhook_subscriptions_book_idx ON legacy_webhook_subscriptions (org_id, mode) WHERE status = 'ACTIVE';

-- The gateway's v3 endpoint for one org and mode. REGISTERING: its Idempotency-Key is chosen, so
-- every process that finishes the registration gets the same endpoint from v3; ACTIVE: v3 knows
-- it; REMOVING: no subscription needs it any more (or its URL changed) and it is being deleted.
CREATE TABLE legacy_webhook_registrations (
  id               uuid PRIMARY KEY,
  org_id           uuid NOT NULL,
  mode             text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  url              text NOT NULL,
  status           text NOT NULL CHECK (status IN ('REGISTERING', 'ACTIVE', 'REMOVING')),
  idempotency_key  text NOT NULL,
  endpoint_id      text,
  -- The v3 endpoint's secret, sealed, bound to the registration id.
  secret           text,
  created_at       timestamptz(3) NOT NULL,
  updated_at       timestamptz(3) NOT NULL,
  CHECK (status <> 'ACTIVE' OR (endpoint_id IS NOT NULL AND secret IS NOT NULL))
);
CREATE UNIQUE INDEX legacy_webhook_registrations_book_idx ON legacy_webhook_registrations (org_id, mode) WHERE status IN ('REGISTERING', 'ACTIVE');

-- A v3 event the gateway accepted, as the legacy body every delivery of it sends. The id is the
-- v3 event id's 128 bits (the legacy eventId), so a repeated v3 delivery finds its row.
CREATE TABLE legacy_webhook_events (
  id             uuid PRIMARY KEY,
  v3_event_id    text NOT NULL,
  org_id         uuid NOT NULL,
  mode           text NOT NULL CHECK (mode IN ('sandbox', 'live')),
  v3_event_type  text NOT NULL,
  legacy_event   text NOT NULL,
  -- The exact bytes sent and signed, so every attempt and every subscription sees the same body.
  body           text NOT NULL,
  created_at     timestamptz(3) NOT NULL,
  received_at    timestamptz(3) NOT NULL
);

-- The outbox: one row per event and subscription, written with the event. Workers claim due rows
-- FOR UPDATE SKIP LOCKED (PostgreSQL) or lease them (PGlite, one process).
CREATE TABLE legacy_webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         uuid NOT NULL REFERENCES legacy_webhook_events(id),
  subscription_id  uuid NOT NULL REFERENCES legacy_webhook_subscriptions(id),
  status           text NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'GAVE_UP')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz(3) NOT NULL,
  -- A leasing worker's claim; past it (or null) the row is free.
  leased_until     timestamptz(3),
  delivered_at     timestamptz(3),
  created_at       timestamptz(3) NOT NULL,
  UNIQUE (event_id, subscription_id)
);
CREATE INDEX legacy_webhook_deliveries_due_idx ON legacy_webhook_deliveries (next_attempt_at) WHERE status = 'PENDING';

CREATE TABLE legacy_webhook_delivery_attempts (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id   bigint NOT NULL REFERENCES legacy_webhook_deliveries(id),
  attempted_at  timestamptz(3) NOT NULL,
  status_code   integer,
  error         text,
  duration_ms   integer NOT NULL
);
CREATE INDEX legacy_webhook_delivery_attempts_delivery_idx ON legacy_webhook_delivery_attempts (delivery_id);
