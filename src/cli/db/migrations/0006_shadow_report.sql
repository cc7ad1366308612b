-- The shadow mode's report: how the gateway's translation of legacy reads compared with the
-- legacy service's answers, kept in the database so that it survives restarts and several
-- gateway processes add to one report. Written in batches (src/gateway/shadow/shadow-recorder.ts),
-- never a write per request. Examples are masked before they are written; tokens never are.

-- Per generation and operation: comparisons made, those with a real difference, mirrored reads
-- that could not be compared (the legacy service down, slow or answering garbage), and reads
-- not mirrored because the cap on mirrors in flight was reached.
CREATE TABLE shadow_operations (
  generation text NOT NULL,
  operation text NOT NULL,
  compared bigint NOT NULL DEFAULT 0,
  differing bigint NOT NULL DEFAULT 0,
  not_compared bigint NOT NULL DEFAULT 0,
  dropped bigint NOT NULL DEFAULT 0,
  first_at timestamptz NOT NULL DEFAULT now(),
  last_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (generation, operation)
);

-- Per field (normalised path): in how many comparisons it differed ('difference'), or differed
-- only where the translation itself moves ('noise'). A difference keeps its last few examples,
-- newest first: [{at, legacy, gateway, seenAt}].
CREATE TABLE shadow_fields (
  generation text NOT NULL,
  operation text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('difference', 'noise')),
  path text NOT NULL,
  count bigint NOT NULL DEFAULT 0,
  examples jsonb NOT NULL DEFAULT '[]'::jsonb,
  last_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (generation, operation, kind, path)
);
