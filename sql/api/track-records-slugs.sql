-- Every source slug with a track record (for the 404's closest slugs).
SELECT source_slug FROM track_records ORDER BY source_slug;
