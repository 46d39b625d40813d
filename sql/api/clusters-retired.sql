-- A thesis id the snapshot no longer defines whose vintages it still holds (a retired thesis: a
-- computed cluster merged into another, a curated thesis removed from its file): how many scored
-- vintages it has and the newest one's as_of. No row for an id with none.
-- Parameters: $thesis_id VARCHAR.
SELECT count(*) AS n_vintages, max(as_of) AS last_as_of
FROM thesis_vintage_scores
WHERE thesis_id = $thesis_id
HAVING count(*) > 0;
