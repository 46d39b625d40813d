-- Export of the track records: the snapshot's track_records (sql/derive/91_track_records.sql), in
-- rank order, the unranked after by slug: the order sql/derive/91 writes the table in, so a slice
-- of its rows sorted is still that slice in file order (api/export/tables.ts). The ORDER BY is
-- what keeps it once the claims are looked up: the semi-join below loses the rows' order in a
-- multi-threaded COPY (Parquet, checked); (rank, source_slug) is unique.
-- BOUND parameters:
--   $updated_since VARCHAR|NULL  UTC timestamp: sources whose record changed at or after it: their
--                                latest claim was made then or later, or one of their claims
--                                resolved then or later (its resolved_at: a resolution changes the
--                                record without a new claim, QA)
--   $category VARCHAR|NULL       sources with claims in this category
SELECT *
FROM track_records
WHERE ($updated_since IS NULL
       OR last_claim_at >= CAST($updated_since AS TIMESTAMP)
       OR source_slug IN (SELECT c.source_slug FROM claims AS c WHERE c.resolved_at >= CAST($updated_since AS TIMESTAMP)))
  AND ($category IS NULL OR list_contains(categories, $category))
ORDER BY rank NULLS LAST, source_slug
