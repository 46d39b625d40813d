-- The members of one page of a thesis' vintages (GET /api/clusters/{id}/), newest vintage first:
-- the vintages from $newest (epoch µs of its as_of, $newest_run) down to $oldest ($oldest_run),
-- both included, in the keyset order (as_of, run_id) of clusters-vintages.sql.
-- Parameters: $thesis_id VARCHAR, $newest_us BIGINT, $newest_run VARCHAR, $oldest_us BIGINT,
-- $oldest_run VARCHAR.
SELECT m.*
FROM thesis_vintage_members AS m
WHERE m.thesis_id = $thesis_id
  AND (epoch_us(m.as_of) < $newest_us OR (epoch_us(m.as_of) = $newest_us AND m.run_id <= $newest_run))
  AND (epoch_us(m.as_of) > $oldest_us OR (epoch_us(m.as_of) = $oldest_us AND m.run_id >= $oldest_run))
ORDER BY m.as_of DESC, m.run_id DESC, m.question_id;
