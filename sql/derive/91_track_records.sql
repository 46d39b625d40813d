-- 91_track_records: one row per source of claims (claim_sources, 90_claims).
--
-- Directional accuracy (every resolved claim with a hit: direction and probability claims):
--   accuracy_score = 100 * sum(hit) / n_directional, a tie (hit 0.5) counting half;
--   accuracy_ci95 = the Wilson score interval (z = 1.959964) of that share, in percent;
--   shrunk_score = 100 * (sum(hit) + m * prior) / (n_directional + m): the share shrunk toward
--   prior = the pooled share of all sources' directional claims (sum of all hits / all
--   directional claims), prior weight m = 20 claims (a source with 20 directional claims sits
--   halfway between its own share and the prior). Ranking uses shrunk_score.
-- Probability claims (outcome 0/1): brier, log_loss (25_score_functions), n_probability.
-- Value claims (value and realized value): mae = mean |value − realized|, bias = mean
--   (value − realized), share_within = share with |value − realized| <= tolerance (the claim's
--   own, documented per import format; else 5% of |realized|), n_value.
--   Units: value_units = the distinct units the value claims name (claims.unit, compared exactly;
--   a claim naming none does not count), value_unit = that unit when there is exactly one (else
--   NULL). Errors in different units are not averaged: with value_units > 1, mae, bias and
--   value_skill are NULL (QA: an institution's $bn deficits and % of GDP debt ratios averaged into
--   one "mean absolute error"); share_within, a share of claims each judged in its own unit, stays.
--   The same in 93_track_record_horizons and 94_track_record_trends, per bucket and year.
-- Relative skill against a reference, positive = better than the reference:
--   brier_skill = mean(reference_brier − brier) over probability claims with a reference (a model
--   or the consensus against the market comparator), n_reference_probability;
--   value_skill = mean(|reference_value − realized| − |value − realized|) over value claims with a
--   reference (a pollster against the other polls of the race in the same window), n_reference_value.
-- ranked: at least 10 resolved directional claims (n_directional >= 10, so n_resolved >= 10 too):
-- the ranking score is their accuracy, and a source of 9 value claims and one lucky call was ranked
-- on that one call (QA: rank 81 of 522, above hundreds of pollsters); rank = position by
-- shrunk_score among ranked sources (ties: more directional claims first, then slug). Sources under
-- 10 resolved directional claims are shown, with rank NULL.

CREATE OR REPLACE TEMP MACRO _wilson_lo(h, n) AS
  CASE WHEN n > 0 THEN
    ((h / n) + 1.959964 * 1.959964 / (2 * n)
     - 1.959964 * sqrt((h / n) * (1 - h / n) / n + 1.959964 * 1.959964 / (4 * n * n)))
    / (1 + 1.959964 * 1.959964 / n) END;

CREATE OR REPLACE TEMP MACRO _wilson_hi(h, n) AS
  CASE WHEN n > 0 THEN
    ((h / n) + 1.959964 * 1.959964 / (2 * n)
     + 1.959964 * sqrt((h / n) * (1 - h / n) / n + 1.959964 * 1.959964 / (4 * n * n)))
    / (1 + 1.959964 * 1.959964 / n) END;

-- accuracy_ci95_lo/hi in percent: Wilson's interval contains the score h/n, but rounding put a
-- bound a last bit across it (10 of 10: hi 99.99999999999999 against a score of 100), so each
-- bound is clamped to the score, computed as accuracy_score is (QA).
CREATE OR REPLACE TEMP MACRO _accuracy_ci95_lo(h, n) AS least(100 * h / nullif(n, 0), 100 * _wilson_lo(h, n));
CREATE OR REPLACE TEMP MACRO _accuracy_ci95_hi(h, n) AS greatest(100 * h / nullif(n, 0), 100 * _wilson_hi(h, n));

CREATE OR REPLACE TEMP MACRO _track_prior_weight() AS 20.0;

-- The value-claim unit aggregates (above), for 91, 93 and 94: over a group's rows of _claim_facts.
CREATE OR REPLACE TEMP MACRO _value_units(unit, error) AS
  count(DISTINCT unit) FILTER (WHERE error IS NOT NULL)::INTEGER;
CREATE OR REPLACE TEMP MACRO _value_unit(unit, error) AS
  CASE WHEN _value_units(unit, error) = 1 THEN max(unit) FILTER (WHERE error IS NOT NULL) END;
-- an average of value errors, NULL when they are in more than one unit
CREATE OR REPLACE TEMP MACRO _one_unit(unit, error, v) AS
  CASE WHEN _value_units(unit, error) <= 1 THEN v END;

CREATE OR REPLACE TABLE _track_agg AS
SELECT source_slug,
       count(*) AS n_claims,
       count(*) FILTER (WHERE resolved) AS n_resolved,
       count(hit) AS n_directional,
       sum(hit) AS hits,
       count(brier) AS n_probability,
       avg(brier) AS brier,
       avg(log_loss) AS log_loss,
       count(error) AS n_value,
       _value_unit(unit, error) AS value_unit,
       _value_units(unit, error) AS value_units,
       _one_unit(unit, error, avg(abs(error))) AS mae,
       _one_unit(unit, error, avg(error)) AS bias,
       avg(CASE WHEN within_tolerance THEN 1.0 WHEN NOT within_tolerance THEN 0.0 END) AS share_within,
       count(reference_brier) FILTER (WHERE brier IS NOT NULL) AS n_reference_probability,
       avg(reference_brier - brier) FILTER (WHERE brier IS NOT NULL) AS brier_skill,
       count(*) FILTER (WHERE reference_value IS NOT NULL AND error IS NOT NULL) AS n_reference_value,
       _one_unit(unit, error, avg(abs(reference_value - realized_value) - abs(error)) FILTER (WHERE reference_value IS NOT NULL AND error IS NOT NULL)) AS value_skill,
       min(made_at) AS first_claim_at,
       max(made_at) AS last_claim_at
FROM _claim_facts
GROUP BY source_slug;

CREATE OR REPLACE TABLE _track_prior AS
SELECT coalesce(sum(hits) / nullif(sum(n_directional), 0), 0.5) AS prior FROM _track_agg;

CREATE OR REPLACE TABLE _track_scored AS
SELECT a.*,
       100 * a.hits / nullif(a.n_directional, 0) AS accuracy_score,
       _accuracy_ci95_lo(a.hits, a.n_directional::DOUBLE) AS accuracy_ci95_lo,
       _accuracy_ci95_hi(a.hits, a.n_directional::DOUBLE) AS accuracy_ci95_hi,
       CASE WHEN a.n_directional > 0
            THEN 100 * (a.hits + _track_prior_weight() * p.prior) / (a.n_directional + _track_prior_weight()) END AS shrunk_score,
       100 * p.prior AS prior_score,
       a.n_directional >= 10 AS ranked
FROM _track_agg AS a, _track_prior AS p;

-- Published.
CREATE OR REPLACE TABLE track_records AS
SELECT s.source_slug, s.name, s.kind, s.url, s.description, s.attribution, s.categories,
       t.n_claims, t.n_resolved, t.n_directional, t.hits,
       t.accuracy_score, t.accuracy_ci95_lo, t.accuracy_ci95_hi, t.shrunk_score, t.prior_score,
       _track_prior_weight()::DOUBLE AS prior_weight,
       t.ranked,
       CASE WHEN t.ranked THEN row_number() OVER (PARTITION BY t.ranked ORDER BY t.shrunk_score DESC, t.n_directional DESC, s.source_slug) END AS rank,
       t.n_probability, t.brier, t.log_loss,
       t.n_value, t.value_unit, t.value_units, t.mae, t.bias, t.share_within,
       t.n_reference_probability, t.brier_skill, t.n_reference_value, t.value_skill,
       t.first_claim_at, t.last_claim_at
FROM claim_sources AS s
JOIN _track_scored AS t ON t.source_slug = s.source_slug
-- in rank order, the unranked after by slug: the export reads the file in its order, and a limit
-- or a plan's cap must take the same sources on every rescore (a hash join's order varies)
ORDER BY rank NULLS LAST, s.source_slug;

DROP TABLE _track_agg;
DROP TABLE _track_prior;
DROP TABLE _track_scored;
