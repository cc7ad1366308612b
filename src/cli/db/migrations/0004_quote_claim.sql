-- A quote records the trade that executed it. Executing a quote is then one conditional UPDATE
-- (claim it if unclaimed) instead of a lock, a read of the trades that used it and a read of the
-- book: under READ COMMITTED an UPDATE that waited for a racing claim re-checks the condition on
-- the committed row, so two trades can never claim one quote. trades.quote_id stays UNIQUE: the
-- database still refuses a second trade of one quote even if code forgot to claim it.
ALTER TABLE quotes ADD COLUMN used_by_trade_id text;
UPDATE quotes SET used_by_trade_id = trades.id FROM trades WHERE trades.quote_id = quotes.id;
