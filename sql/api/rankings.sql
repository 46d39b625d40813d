-- GET /api/rankings/: the leaderboard of every category, domain and horizon cell (one rounds),
-- every mode or one, every dimension or one.
-- Parameters: $rounds VARCHAR, $mode VARCHAR (nullable), $dimension VARCHAR (nullable).
SELECT *
FROM leaderboard
WHERE rounds = $rounds
  AND dimension <> 'overall'
  AND ($mode IS NULL OR mode = $mode)
  AND ($dimension IS NULL OR dimension = $dimension)
ORDER BY CASE dimension WHEN 'category' THEN 0 WHEN 'domain' THEN 1 ELSE 2 END, key,
         CASE mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END, rank, forecaster;
