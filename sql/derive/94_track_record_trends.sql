-- 94_track_record_trends: the track record per source and year the claims were made (UTC), over
-- resolved claims. Metrics and interval as in 91_track_records (Wilson 95%, a tie counting half).

CREATE OR REPLACE TABLE track_record_trends AS
SELECT source_slug,
       year,
       count(*) AS n_resolved,
       count(hit) AS n_directional,
       100 * sum(hit) / nullif(count(hit), 0) AS accuracy_score,
       _accuracy_ci95_lo(sum(hit), count(hit)::DOUBLE) AS accuracy_ci95_lo,
       _accuracy_ci95_hi(sum(hit), count(hit)::DOUBLE) AS accuracy_ci95_hi,
       count(brier) AS n_probability,
       avg(brier) AS brier,
       avg(log_loss) AS log_loss,
       count(error) AS n_value,
       _value_unit(unit, error) AS value_unit,
       _value_units(unit, error) AS value_units,
       _one_unit(unit, error, avg(abs(error))) AS mae,
       _one_unit(unit, error, avg(error)) AS bias,
       avg(CASE WHEN within_tolerance THEN 1.0 WHEN NOT within_tolerance THEN 0.0 END) AS share_within
FROM _claim_facts
WHERE resolved
GROUP BY source_slug, year;

DROP TABLE _claim_facts; -- (its last reader)
