-- Export of scored forecasts: the snapshot's scored_forecasts, one row per scored
-- (question, model, mode) with its Brier and log loss beside the market's. With a limit: the first
-- rows in the snapshot table's order; without one: no guaranteed order.
-- Run by the export engine as `COPY (<this query>) TO ...` (wrapped in a bound LIMIT when one
-- applies) with BOUND parameters:
--   $since VARCHAR|NULL  ISO timestamp (UTC): rows resolved at or after it
--   $category VARCHAR|NULL  one of the nine categories
SELECT *
FROM scored_forecasts
WHERE ($since IS NULL OR resolved_at >= CAST($since AS TIMESTAMP))
  AND ($category IS NULL OR category = $category)
