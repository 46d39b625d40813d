-- GET /api/analysis/anchoring/: the anchoring rows, every mode or one.
-- Parameters: $mode VARCHAR (nullable: every mode).
SELECT *
FROM anchoring
WHERE $mode IS NULL OR mode = $mode
ORDER BY kind DESC, forecaster, CASE mode WHEN 'blind' THEN 0 WHEN 'informed' THEN 1 ELSE 2 END;
