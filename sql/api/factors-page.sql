-- GET /api/factors/: one page of anchor factors, keyset-paginated by factor_id ASC.
-- Parameters: $after VARCHAR|NULL (the previous page's last factor_id), $limit BIGINT (page size + 1).
SELECT f.* FROM factors AS f
WHERE ($after IS NULL OR f.factor_id > $after)
ORDER BY f.factor_id
LIMIT $limit;
