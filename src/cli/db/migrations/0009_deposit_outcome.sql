-- What a deposit becomes when it settles: COMPLETED (credited to the client account) or FAILED
-- (never credited, event deposit.failed). Sandbox deposits choose it, so integrators can
-- exercise the failure path; every deposit made before this column completes.
ALTER TABLE deposits ADD COLUMN outcome text NOT NULL DEFAULT 'COMPLETED' CHECK (outcome IN ('COMPLETED', 'FAILED'));
