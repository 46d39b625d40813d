-- One source's metrics by horizon bucket, shortest first. Parameters: $slug VARCHAR.
SELECT * FROM track_record_horizons WHERE source_slug = $slug ORDER BY min_horizon_days, horizon_bucket;
