-- GET /api/analysis/disagreement/: the consensus Brier by disagreement quintile.
-- Parameters: $rounds VARCHAR, $mode VARCHAR (nullable: every scope).
SELECT *
FROM disagreement_quintiles
WHERE rounds = $rounds AND ($mode IS NULL OR mode = $mode)
ORDER BY mode, quintile;
