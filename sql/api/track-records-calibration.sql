-- One source's calibration bins. Parameters: $slug VARCHAR.
SELECT bin, n, mean_probability, observed FROM track_record_calibration WHERE source_slug = $slug ORDER BY bin;
