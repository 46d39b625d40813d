-- Every scenario id (for the 404's closest ids).
SELECT scenario_id FROM scenarios ORDER BY scenario_id;
