-- Up Migration
-- The ClickHouse copies of persons and distinct ids that ingest owes for person changes committed
-- here, written in the same transaction as the changes and deleted once ClickHouse took them.
-- A process that dies in between leaves its entry behind, and the replayed Kafka messages find
-- their changes already made and produce no copies: any ingest process writes them from here.
CREATE TABLE ingest_outbox (
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  payload jsonb NOT NULL
);
