-- How many claims match the filters of GET /api/claims/ (parameters as claims-page.sql).
SELECT count(*) AS total
FROM claims AS c
WHERE ($source IS NULL OR c.source_slug = $source)
  AND ($kind IS NULL OR c.kind = $kind)
  AND ($resolved IS NULL OR c.resolved = $resolved)
  AND ($made_since_us IS NULL OR epoch_us(c.made_at) >= $made_since_us)
  AND ($question_id IS NULL OR c.question_id = $question_id);
