-- One source's track record. Parameters: $slug VARCHAR.
SELECT * FROM track_records WHERE source_slug = $slug;
