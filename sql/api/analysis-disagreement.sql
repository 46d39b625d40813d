-- GET /api/analysis/disagreement/: the disagreement rows of one rounds, every scope or one.
-- Parameters: $rounds VARCHAR, $mode VARCHAR (nullable: every scope).
SELECT *
FROM disagreement
WHERE rounds = $rounds AND ($mode IS NULL OR mode = $mode)
ORDER BY CASE mode WHEN 'headline' THEN 0 WHEN 'blind' THEN 1 WHEN 'informed' THEN 2 ELSE 3 END;
