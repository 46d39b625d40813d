-- GET /api/analysis/anchoring/: the anchoring rows of one rounds, every mode or one.
-- Parameters: $rounds VARCHAR ('latest' | 'all'), $mode VARCHAR (nullable: every mode).
SELECT *
FROM anchoring
WHERE rounds = $rounds
  AND ($mode IS NULL OR mode = $mode)
ORDER BY kind DESC, forecaster, CASE mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END;
