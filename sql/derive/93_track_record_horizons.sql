-- 93_track_record_horizons: value and directional metrics per source and horizon bucket.
-- horizon_bucket (90_claims): the day buckets of 25_score_functions up to 365 days ('0-7', '8-30',
-- '31-90', '91-365'), then whole years rounded up ('2y', '3y', ...: a CBO projection for the
-- fourth fiscal year after its baseline is '4y'). Metrics as in 91_track_records.

CREATE OR REPLACE TABLE track_record_horizons AS
SELECT source_slug,
       horizon_bucket,
       min(horizon_days) AS min_horizon_days,
       count(*) FILTER (WHERE resolved) AS n_resolved,
       count(hit) AS n_directional,
       100 * sum(hit) / nullif(count(hit), 0) AS accuracy_score,
       count(brier) AS n_probability,
       avg(brier) AS brier,
       count(error) AS n_value,
       _value_unit(unit, error) AS value_unit,
       _value_units(unit, error) AS value_units,
       _one_unit(unit, error, avg(abs(error))) AS mae,
       _one_unit(unit, error, avg(error)) AS bias,
       avg(CASE WHEN within_tolerance THEN 1.0 WHEN NOT within_tolerance THEN 0.0 END) AS share_within
FROM _claim_facts
WHERE resolved AND horizon_bucket IS NOT NULL
GROUP BY source_slug, horizon_bucket;
