-- An event's inserted_at is the time ClickHouse stored it, not the time ingest read it: batch
-- exports cut their windows by it, and a row written late (ingest waiting out a ClickHouse
-- outage) must land in a window that has not been exported yet. Re-running it changes nothing.
ALTER TABLE events MODIFY COLUMN inserted_at DateTime('UTC') DEFAULT now();
