-- How many sources match the overview's filters. Parameters: $kind, $min_resolved, $category.
SELECT count(*) AS total
FROM track_records AS t
WHERE ($kind IS NULL OR t.kind = $kind)
  AND t.n_resolved >= $min_resolved
  AND ($category IS NULL OR list_contains(t.categories, $category));
