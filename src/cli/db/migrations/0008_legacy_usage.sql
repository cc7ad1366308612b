-- Who still calls the legacy generations, for the team retiring them: one row per org, key,
-- generation and operation, with every request counted, those refused with 410 counted apart
-- (in a brownout, after the sunset), when the first and the last were seen and the last one's
-- client address. Written in batches by each gateway process (src/gateway/usage/usage-recorder.ts),
-- never a write per request; several processes add to the same rows.
--
-- A request refused before its key was known (no token, a bad or replayed one) has no org and
-- no key: it is counted on the row of its generation and operation whose org_id and key_name
-- are both NULL. Rows are not tied to orgs or keys by foreign keys: a revoked key's usage stays.
CREATE TABLE legacy_usage (
  org_id uuid,
  key_name text,
  generation text NOT NULL,
  operation text NOT NULL,
  count bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
  refused_brownout bigint NOT NULL DEFAULT 0 CHECK (refused_brownout >= 0),
  refused_sunset bigint NOT NULL DEFAULT 0 CHECK (refused_sunset >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  last_address text,
  CHECK ((org_id IS NULL) = (key_name IS NULL))
);

-- The row's identity, with NULL (not attributable) as one value: a plain UNIQUE would treat each
-- NULL as distinct, and NULLS NOT DISTINCT needs PostgreSQL 15.
CREATE UNIQUE INDEX legacy_usage_identity ON legacy_usage ((coalesce(org_id::text, '')), (coalesce(key_name, '')), generation, operation);

-- `fxgate usage --since 7d` and GET /admin/usage?since=7d select by the last request seen.
CREATE INDEX legacy_usage_last_seen ON legacy_usage (last_seen);
