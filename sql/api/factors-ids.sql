-- Every factor id (for the 404's closest ids).
SELECT factor_id FROM factors ORDER BY factor_id;
