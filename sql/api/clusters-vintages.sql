-- The vintages (frozen records) with their scores of the theses with thesis_id in [$first, $last],
-- newest first, at most $per_thesis per thesis (NULL: all), plus each thesis' number of vintages.
-- Parameters: $first VARCHAR, $last VARCHAR, $per_thesis BIGINT|NULL.
SELECT v.*, count(*) OVER (PARTITION BY v.thesis_id) AS n_vintages
FROM thesis_vintage_scores AS v
WHERE v.thesis_id BETWEEN $first AND $last
QUALIFY $per_thesis IS NULL
     OR row_number() OVER (PARTITION BY v.thesis_id ORDER BY v.as_of DESC, v.run_id DESC) <= $per_thesis
ORDER BY v.thesis_id, v.as_of DESC, v.run_id DESC;
