-- One source's metrics per year, oldest first. Parameters: $slug VARCHAR.
SELECT * FROM track_record_trends WHERE source_slug = $slug ORDER BY year;
