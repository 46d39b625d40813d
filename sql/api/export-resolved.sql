-- Export of resolved predictions: the snapshot's resolved_predictions, in its published order
-- (newest resolution first). The export engine may run this query once per slice of
-- resolved_predictions' rows (the view then holds one ordered slice of the file): it must read
-- that table once, filter it and keep its order, never sort or join (api/export/tables.ts).
-- Run by the export engine as `COPY (<this query>) TO ...` (wrapped in a bound LIMIT when one
-- applies) with BOUND parameters:
--   $resolved_since VARCHAR|NULL  UTC timestamp: rows with resolved_at >= it
--   $category VARCHAR|NULL  one of the nine categories
-- outcome is an INTEGER (1, 0; NULL when annulled); a stored outcome other than 0/1 fails the
-- export rather than being rounded.
SELECT * REPLACE (
  CASE
    WHEN outcome IS NULL THEN NULL
    WHEN outcome IN (0, 1) THEN CAST(outcome AS INTEGER)
    ELSE error('question ' || question_id || ' has outcome ' || outcome || ', neither 0 nor 1')
  END AS outcome
)
FROM resolved_predictions
WHERE ($resolved_since IS NULL OR resolved_at >= CAST($resolved_since AS TIMESTAMP))
  AND ($category IS NULL OR category = $category)
