-- A scenario id the snapshot no longer defines whose archived records it still holds (a retired
-- scenario: taken out of its file, or withheld because a component is a question the warehouse
-- does not have): how many records it has and the newest one's as_of. No row for an id with none.
-- Parameters: $scenario_id VARCHAR.
SELECT count(*) AS n_records, max(as_of) AS last_as_of
FROM scenario_records
WHERE scenario_id = $scenario_id
HAVING count(*) > 0;
