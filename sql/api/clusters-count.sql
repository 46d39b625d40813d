-- GET /api/clusters/: the number of theses the filter selects. Parameters: $origin VARCHAR|NULL.
SELECT count(*) AS total FROM theses WHERE ($origin IS NULL OR origin = $origin);
