-- Legacy webhooks in a fleet of gateways (src/gateway/webhooks/fleet-callback.ts and
-- registrations.ts): the callback bases the running gateways advertise, the one the fleet
-- registers with v3, and the v3 endpoints kept after a change of base until v3 has finished
-- their deliveries.

-- One row per running gateway process that advertises a callback base (FXGATE_GATEWAY_WEBHOOK_URL,
-- or `fxgate all`'s own listener), renewed at each of its reconciliations. Past expires_at the
-- process is taken for gone; a process that stops deletes its own row. Times are the database's;
-- which process came first is told by start_order, which no clock (nor a millisecond shared by two
-- starts) can reverse.
CREATE TABLE legacy_webhook_gateways (
  instance_id  uuid PRIMARY KEY,
  base_url     text NOT NULL,
  start_order  bigint GENERATED ALWAYS AS IDENTITY,
  started_at   timestamptz(3) NOT NULL,
  renewed_at   timestamptz(3) NOT NULL,
  expires_at   timestamptz(3) NOT NULL
);

-- The fleet's callback base, one row: every gateway registers the books' v3 endpoints there. It
-- changes only when no live gateway advertises it any more, to the base the newest live gateways
-- advertise. Locked FOR UPDATE by each decision, so gateways decide one after another.
CREATE TABLE legacy_webhook_callback (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  base_url    text,
  decided_at  timestamptz(3)
);
INSERT INTO legacy_webhook_callback (singleton) VALUES (true);

-- RETIRING: a registration whose URL is no longer the fleet's. Its v3 endpoint is kept, and the
-- receiver still accepts its signature, until retire_after (set once its successor is ACTIVE, v3's
-- retry window later), so that every delivery v3 still holds for it is made; then it is deleted
-- (REMOVING). A registration at the fleet's URL again before then becomes ACTIVE again.
ALTER TABLE legacy_webhook_registrations DROP CONSTRAINT legacy_webhook_registrations_status_check;
ALTER TABLE legacy_webhook_registrations DROP CONSTRAINT legacy_webhook_registrations_check;
ALTER TABLE legacy_webhook_registrations
  ADD CONSTRAINT legacy_webhook_registrations_status_check
  CHECK (status IN ('REGISTERING', 'ACTIVE', 'RETIRING', 'REMOVING'));
ALTER TABLE legacy_webhook_registrations
  ADD CONSTRAINT legacy_webhook_registrations_check
  CHECK (status NOT IN ('ACTIVE', 'RETIRING') OR (endpoint_id IS NOT NULL AND secret IS NOT NULL));
ALTER TABLE legacy_webhook_registrations ADD COLUMN retire_after timestamptz(3);
