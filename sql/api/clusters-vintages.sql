-- The vintages (frozen records) with their scores of the theses with thesis_id in [$first, $last],
-- newest first, at most $per_thesis per thesis (NULL: all), plus each thesis' number of vintages
-- (all of them, on every page) and key_us = epoch_us(as_of) (for the next cursor).
-- A page of one thesis' history (keyset (as_of, run_id) descending): $before_us/$before_run, the
-- previous page's oldest vintage (epoch µs of its as_of, its run id; NULL: from the newest).
-- Parameters: $first VARCHAR, $last VARCHAR, $per_thesis BIGINT|NULL, $before_us BIGINT|NULL,
-- $before_run VARCHAR|NULL.
WITH v AS (
  SELECT v.*, epoch_us(v.as_of) AS key_us, count(*) OVER (PARTITION BY v.thesis_id) AS n_vintages
  FROM thesis_vintage_scores AS v
  WHERE v.thesis_id BETWEEN $first AND $last
)
SELECT *
FROM v
WHERE $before_us IS NULL OR key_us < $before_us OR (key_us = $before_us AND run_id < $before_run)
QUALIFY $per_thesis IS NULL
     OR row_number() OVER (PARTITION BY thesis_id ORDER BY as_of DESC, run_id DESC) <= $per_thesis
ORDER BY thesis_id, as_of DESC, run_id DESC;
