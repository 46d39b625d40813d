-- Export of the claims database: the snapshot's claims (sql/derive/90_claims.sql), in the snapshot
-- table's order. The export engine may run this query once per slice of claims' rows: it reads
-- that table once, filters it and keeps its order, never sorts or joins (api/export/tables.ts).
-- BOUND parameters:
--   $created_since VARCHAR|NULL   UTC timestamp: claims with made_at >= it
--   $resolved_since VARCHAR|NULL  UTC timestamp: claims with resolved_at >= it
--   $category VARCHAR|NULL        the claim's category
SELECT *
FROM claims
WHERE ($created_since IS NULL OR made_at >= CAST($created_since AS TIMESTAMP))
  AND ($resolved_since IS NULL OR resolved_at >= CAST($resolved_since AS TIMESTAMP))
  AND ($category IS NULL OR category = $category)
