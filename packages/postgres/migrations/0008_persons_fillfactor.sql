-- Up Migration
-- Ingest rewrites a person's properties on nearly every chunk (posthog-js's device and URL
-- properties are copied into $set), and each rewrite is a new row version. With full pages the
-- new version lands on another page and every index of persons gets an entry for it; with room
-- left on the page it stays there as a heap-only tuple and the indexes are untouched. Measured
-- with bench/ingest.ts: heap-only updates 8% -> 80% of person updates. Pages written before this
-- keep no room until the table is rewritten (VACUUM FULL), so an existing deployment gains as
-- persons are created.
ALTER TABLE persons SET (fillfactor = 70);
