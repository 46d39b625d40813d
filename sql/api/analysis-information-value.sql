-- GET /api/analysis/information-value/: the information_value rows of one rounds and cell.
-- Parameters: $rounds VARCHAR, $dimension VARCHAR ('overall' or 'category'), $key VARCHAR.
SELECT *
FROM information_value
WHERE rounds = $rounds AND dimension = $dimension AND key = $key
ORDER BY kind, forecaster, comparison;
