-- 92_track_record_calibration: calibration bins per source, over its resolved probability claims
-- (outcome 0 or 1). bin = _calibration_bin(p) (25_score_functions: floor(10p), p = 1 in bin 9);
-- mean_probability = the mean claimed probability in the bin, observed = the share that happened.

CREATE OR REPLACE TABLE track_record_calibration AS
SELECT source_slug,
       _calibration_bin(probability) AS bin,
       count(*) AS n,
       avg(probability) AS mean_probability,
       avg(outcome) AS observed
FROM _claim_facts
WHERE brier IS NOT NULL
GROUP BY source_slug, _calibration_bin(probability);
