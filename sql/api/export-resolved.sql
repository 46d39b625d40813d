-- Export of resolved predictions: the snapshot's resolved_predictions. With a limit: the first
-- rows in its published order (newest resolution first); without one: no guaranteed order.
-- Run by the export engine as `COPY (<this query>) TO ...` (wrapped in a bound LIMIT when one
-- applies) with BOUND parameters:
--   $since VARCHAR|NULL  ISO timestamp (UTC): rows resolved at or after it
--   $category VARCHAR|NULL  one of the nine categories
SELECT *
FROM resolved_predictions
WHERE ($since IS NULL OR resolved_at >= CAST($since AS TIMESTAMP))
  AND ($category IS NULL OR category = $category)
