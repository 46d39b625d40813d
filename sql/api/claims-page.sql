-- GET /api/claims/: one page of claims, newest first, keyset-paginated by
-- (made_at DESC, claim_id ASC); the cursor is the last row's epoch_us(made_at) and claim_id.
-- Parameters: $source VARCHAR|NULL, $kind VARCHAR|NULL, $resolved BOOLEAN|NULL,
-- $made_since_us BIGINT|NULL (epoch µs), $question_id VARCHAR|NULL, $after BOOLEAN, $after_made_us BIGINT|NULL,
-- $after_claim_id VARCHAR|NULL, $limit BIGINT (page size + 1).
SELECT c.*, epoch_us(c.made_at) AS cursor_made_us
FROM claims AS c
WHERE ($source IS NULL OR c.source_slug = $source)
  AND ($kind IS NULL OR c.kind = $kind)
  AND ($resolved IS NULL OR c.resolved = $resolved)
  AND ($made_since_us IS NULL OR epoch_us(c.made_at) >= $made_since_us)
  AND ($question_id IS NULL OR c.question_id = $question_id)
  AND (NOT $after OR epoch_us(c.made_at) < $after_made_us
       OR (epoch_us(c.made_at) = $after_made_us AND c.claim_id > $after_claim_id))
ORDER BY c.made_at DESC, c.claim_id ASC
LIMIT $limit;
