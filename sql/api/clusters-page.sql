-- GET /api/clusters/: one page of theses (thesis maps), keyset-paginated by thesis_id ASC.
-- Parameters: $origin VARCHAR|NULL (curated | computed), $after VARCHAR|NULL (the previous page's
-- last thesis_id), $limit BIGINT (page size + 1, to learn whether a page follows).
SELECT t.*
FROM theses AS t
WHERE ($origin IS NULL OR t.origin = $origin)
  AND ($after IS NULL OR t.thesis_id > $after)
ORDER BY t.thesis_id
LIMIT $limit;
