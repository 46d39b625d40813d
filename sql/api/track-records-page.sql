-- GET /api/track-records/: one page of sources' track records, keyset-paginated by
-- (sort_key ASC, source_slug ASC). sort_key per $sort (ascending; NULL metrics last):
--   rank:       rank, then the unranked sources by n_resolved descending
--   accuracy:   accuracy_score descending
--   n_resolved: n_resolved descending
--   brier:      brier ascending
--   mae:        mae ascending
--   (a NULL metric takes the largest DOUBLE, after every real one: an MAE in a currency's units
--   passes 1e15, the former key of NULL, and a source without value claims sorted before it (QA);
--   imported numbers are at most 1e100 in magnitude, formats.ts MAX_ABS_VALUE, so no MAE reaches it)
--   The metrics are keyed rounded to 9 decimals, as the leaderboard ranks them: equal figures that
--   floating noise set a last bit apart (an MAE of |0.7 − 1| = 0.30000000000000004 and one of 0.3,
--   both published 0.3) tie and go by slug, instead of an order a reader cannot see (outside test).
--   slug:       0 (source_slug alone)
-- Parameters: $sort VARCHAR, $kind VARCHAR|NULL, $min_resolved BIGINT, $category VARCHAR|NULL,
-- $after BOOLEAN, $after_key DOUBLE|NULL, $after_slug VARCHAR|NULL, $limit BIGINT (page size + 1).
WITH keyed AS (
  SELECT t.*,
         CASE $sort
           WHEN 'rank' THEN CASE WHEN t.rank IS NOT NULL THEN t.rank::DOUBLE ELSE 1e12 - t.n_resolved END
           WHEN 'accuracy' THEN coalesce(-round(t.accuracy_score, 9), 1e15)
           WHEN 'n_resolved' THEN -t.n_resolved::DOUBLE
           WHEN 'brier' THEN coalesce(round(t.brier, 9), 1e15)
           WHEN 'mae' THEN coalesce(round(t.mae, 9), 1.7976931348623157e308)
           ELSE 0 END AS sort_key
  FROM track_records AS t
  WHERE ($kind IS NULL OR t.kind = $kind)
    AND t.n_resolved >= $min_resolved
    AND ($category IS NULL OR list_contains(t.categories, $category))
)
SELECT *
FROM keyed
WHERE NOT $after OR sort_key > $after_key OR (sort_key = $after_key AND source_slug > $after_slug)
ORDER BY sort_key, source_slug
LIMIT $limit;
