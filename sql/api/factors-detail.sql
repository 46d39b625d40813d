-- One anchor factor (GET /api/factors/{factor_id}/). Parameters: $factor_id VARCHAR.
SELECT f.* FROM factors AS f WHERE f.factor_id = $factor_id;
