-- The legacy requests the gateway refused with 429 because their own budget was spent: the
-- key's on its row, the client address's (a token that proved no key) on the row without org
-- and key. Counted apart from `count`, which holds every request, as the 410s are. A 429 of
-- v3's budget for the gateway's own credential is not among them: that budget is the book's,
-- and the gateway's metrics count it (fxgate_gateway_rate_limited_total, source "upstream").
ALTER TABLE legacy_usage ADD COLUMN rate_limited bigint NOT NULL DEFAULT 0 CHECK (rate_limited >= 0);
