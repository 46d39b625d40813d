-- Export of the track records: the snapshot's track_records (sql/derive/91_track_records.sql), in
-- the snapshot table's order; read once, filtered, never sorted or joined (api/export/tables.ts).
-- BOUND parameters:
--   $updated_since VARCHAR|NULL  UTC timestamp: sources whose latest claim was made at or after it
--   $category VARCHAR|NULL       sources with claims in this category
SELECT *
FROM track_records
WHERE ($updated_since IS NULL OR last_claim_at >= CAST($updated_since AS TIMESTAMP))
  AND ($category IS NULL OR list_contains(categories, $category))
