-- GET /api/scenarios/: the number of scenarios the filters select.
-- Parameters: $status VARCHAR|NULL, $since_us BIGINT|NULL (as in scenarios-page.sql).
SELECT count(*) AS total
FROM scenarios AS s
WHERE ($status IS NULL OR s.status = $status)
  AND ($since_us IS NULL OR epoch_us(s.latest_record_as_of) >= $since_us);
