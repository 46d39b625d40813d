-- GET /api/leaderboard/: the leaderboard rows of one cell (dimension, key) and rounds, for one
-- mode or every mode ($mode NULL), best first (rank by difficulty-adjusted Brier).
-- Parameters: $rounds VARCHAR, $dimension VARCHAR, $key VARCHAR, $mode VARCHAR (nullable).
SELECT *
FROM leaderboard
WHERE rounds = $rounds
  AND dimension = $dimension
  AND key = $key
  AND ($mode IS NULL OR mode = $mode)
ORDER BY CASE mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END, rank, forecaster;
