-- GET /api/scenarios/: one page of scenarios, keyset-paginated by scenario_id ASC.
-- Parameters: $status VARCHAR|NULL (active | resolved | annulled), $since_us BIGINT|NULL (epoch µs: only
-- scenarios with a record archived at or after it), $after VARCHAR|NULL (the previous page's last
-- scenario_id), $limit BIGINT (page size + 1, to learn whether a page follows).
SELECT s.*
FROM scenarios AS s
WHERE ($status IS NULL OR s.status = $status)
  AND ($since_us IS NULL OR epoch_us(s.latest_record_as_of) >= $since_us)
  AND ($after IS NULL OR s.scenario_id > $after)
ORDER BY s.scenario_id
LIMIT $limit;
