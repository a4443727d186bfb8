-- When ClickHouse stored each person and distinct-id row: the persons batch export cuts its
-- windows by it, as the events export does by inserted_at.
ALTER TABLE person ADD COLUMN _timestamp DateTime('UTC') DEFAULT now();
ALTER TABLE person_distinct_id ADD COLUMN _timestamp DateTime('UTC') DEFAULT now();
