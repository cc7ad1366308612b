-- Run once, when the data volume is new. Through PgBouncer in transaction pooling, a statement
-- outside a transaction is bounded by its role's own timeout (docs/operations.md, PgBouncer).
ALTER ROLE fxgate SET statement_timeout = '10s';
