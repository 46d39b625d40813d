-- One claim with its source's name and kind. Parameters: $claim_id VARCHAR.
SELECT c.*, s.name AS source_name, s.kind AS source_kind, s.attribution AS source_attribution
FROM claims AS c
LEFT JOIN claim_sources AS s ON s.source_slug = c.source_slug
WHERE c.claim_id = $claim_id;
