-- What would break if each legacy key moved to the next generation unchanged (v1 -> v2, v2 -> v3):
-- one row per org, key, generation, operation and blocker kind (mappings/blockers.ts), with the
-- requests that met it, when the first and the last were seen, and a masked example of the last
-- (method, path template, the header or parameter concerned: never a value the client sent).
-- Written in batches by each gateway process (src/gateway/usage/readiness-recorder.ts), never a
-- write per request; several processes add to the same rows. The requests of each key and
-- operation are counted in legacy_usage, which the readiness report reads beside this table.
--
-- Only requests of a known key are checked, so org_id and key_name are never NULL. `severity` is
-- the one declared when the row was last written. No foreign keys: a revoked key's rows stay.
CREATE TABLE legacy_readiness (
  org_id uuid NOT NULL,
  key_name text NOT NULL,
  generation text NOT NULL,
  operation text NOT NULL,
  kind text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('blocker', 'warning')),
  count bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  example text NOT NULL,
  PRIMARY KEY (org_id, key_name, generation, operation, kind)
);
