-- 99_factor_2_health: the health of the factor system (issue 12), per factor and for the system.
--
-- Settings: _health_params (pipeline/factors/stage.ts, QUORUM_HEALTH_* with defaults; without it the
-- defaults below), including `sync_report`, the JSON sync report of the run being published (its
-- runs row is written after the publish), NULL when the run did not sync.
--
-- factor_health, one row per factor, over its leaves (99_factor_1_tree.sql):
--   coverage: share of the active leaves forecast by every model of the latest run (the run of the
--     newest forecast at or before as_of; "every model" = the distinct models of that run);
--   newest_forecast_age_hours / newest_price_age_hours: as_of minus the newest forecast / market
--     price of any leaf;
--   stale_leaves: active leaves with no forecast in the latest run ('no_forecast_in_latest_run') or
--     whose latest price is older than stale_price_hours ('stale_price');
--   brier / market_brier: mean Brier of the headline scored consensus and of the market over the
--     resolved leaves with a fresh market comparator (the same questions on both sides), n_scored;
--   disagreement: mean model disagreement (sd) of the leaves with a consensus;
--   market_share: share of the leaves with a market price;
--   contradictions (factor_contradictions): pairs of the factor's leaves, both with a consensus,
--     linked in question_links where the consensus breaks the link: `implies` (a ⇒ b) with
--     P(a) > P(b), `excludes` with P(a) + P(b) > 1; `violation` = P(a) − P(b) or P(a) + P(b) − 1.
--
-- system_health, one row per check, status ok | degraded | failing (the API adds the snapshot's
-- age at request time, with the thresholds published here, and takes the worst):
--   model_failures: failed / sent model calls (budget-skipped ones are not) of the latest run (by
--     its as_of, at or before this one's) that made any;
--   venue_sync: the sync report of this run, else the latest one recorded: `partial` is degraded,
--     `failed` failing, the failing venues and sources named;
--   stale_prices: share of the active questions with a market price whose latest price is older
--     than stale_price_hours;
--   snapshot_age: thresholds only (value NULL): the API measures it.

CREATE TEMP TABLE IF NOT EXISTS _health_params AS
SELECT 0.1::DOUBLE AS failure_rate_degraded, 0.5::DOUBLE AS failure_rate_failing,
       48.0::DOUBLE AS stale_price_hours, 0.25::DOUBLE AS stale_share_degraded, 0.75::DOUBLE AS stale_share_failing,
       36.0::DOUBLE AS snapshot_age_degraded_hours, 108.0::DOUBLE AS snapshot_age_failing_hours,
       0.5::DOUBLE AS coverage_degraded, 0.05::DOUBLE AS coherence_tolerance, NULL::VARCHAR AS sync_report;

CREATE OR REPLACE TABLE factor_contradictions AS
SELECT la.factor_id, l.a AS question_a, l.b AS question_b, l.kind, l.origin AS link_origin,
       la.consensus AS consensus_a, lb.consensus AS consensus_b,
       CASE l.kind WHEN 'implies' THEN la.consensus - lb.consensus ELSE la.consensus + lb.consensus - 1 END AS violation
FROM question_links AS l
JOIN factor_leaves AS la ON la.question_id = l.a
JOIN factor_leaves AS lb ON lb.question_id = l.b AND lb.factor_id = la.factor_id
WHERE la.consensus IS NOT NULL AND lb.consensus IS NOT NULL
  AND ((l.kind = 'implies' AND la.consensus > lb.consensus)
    OR (l.kind = 'excludes' AND la.consensus + lb.consensus > 1))
ORDER BY la.factor_id, violation DESC, question_a, question_b;

CREATE OR REPLACE TABLE _factor_health_base AS
WITH leaves AS (
  SELECT l.*,
         (epoch(rp.as_of) - epoch(l.market_observed_at)) / 3600.0 AS price_age_hours,
         lr.n_models AS run_models,
         l.status = 'active' AND lr.run_id IS NOT NULL AND l.models_latest_run = 0 AS no_recent_forecast,
         l.status = 'active' AND l.market_observed_at IS NOT NULL
           AND (epoch(rp.as_of) - epoch(l.market_observed_at)) / 3600.0 > hp.stale_price_hours AS stale_price
  FROM factor_leaves AS l
  CROSS JOIN run_params AS rp
  CROSS JOIN _health_params AS hp
  LEFT JOIN _factor_latest_run AS lr ON true
),
scored AS (
  SELECT l.factor_id, count(*) AS n_scored, avg(s.brier) AS brier, avg(s.market_brier) AS market_brier
  FROM factor_leaves AS l
  JOIN scored_consensus AS s ON s.question_id = l.question_id AND s.is_headline AND s.market_status = 'ok'
  GROUP BY l.factor_id
),
contra AS (
  SELECT factor_id, count(*) AS n_contradictions FROM factor_contradictions GROUP BY factor_id
),
agg AS (
  SELECT factor_id,
         count(*) AS n_leaves,
         count(*) FILTER (WHERE status = 'active') AS n_active,
         count(*) FILTER (WHERE status = 'resolved') AS n_resolved,
         count(*) FILTER (WHERE status = 'active' AND run_models > 0 AND models_latest_run >= run_models) AS n_covered,
         max(last_forecast_at) AS newest_forecast_at,
         max(market_observed_at) AS newest_price_at,
         avg(disagreement_sd) FILTER (WHERE consensus IS NOT NULL) AS disagreement,
         count(market_probability) AS n_with_market,
         list({'question_id': question_id,
               'reasons': list_concat(CASE WHEN no_recent_forecast THEN ['no_forecast_in_latest_run'] ELSE [] END,
                                      CASE WHEN stale_price THEN ['stale_price'] ELSE [] END)}
              ORDER BY question_id) FILTER (WHERE no_recent_forecast OR stale_price) AS stale_leaves
  FROM leaves
  GROUP BY factor_id
)
SELECT f.factor_id, f.name,
       coalesce(a.n_leaves, 0) AS n_leaves, coalesce(a.n_active, 0) AS n_active, coalesce(a.n_resolved, 0) AS n_resolved,
       coalesce(a.n_covered, 0) AS n_covered,
       CASE WHEN coalesce(a.n_active, 0) > 0 THEN coalesce(a.n_covered, 0) / a.n_active END AS coverage,
       (SELECT n_models FROM _factor_latest_run) AS latest_run_models,
       (SELECT run_id FROM _factor_latest_run) AS latest_run_id,
       a.newest_forecast_at,
       (epoch(rp.as_of) - epoch(a.newest_forecast_at)) / 3600.0 AS newest_forecast_age_hours,
       a.newest_price_at,
       (epoch(rp.as_of) - epoch(a.newest_price_at)) / 3600.0 AS newest_price_age_hours,
       coalesce(a.stale_leaves, []) AS stale_leaves,
       len(coalesce(a.stale_leaves, [])) AS n_stale,
       coalesce(s.n_scored, 0) AS n_scored, s.brier, s.market_brier, s.brier - s.market_brier AS brier_vs_market,
       a.disagreement,
       CASE WHEN coalesce(a.n_leaves, 0) > 0 THEN a.n_with_market / a.n_leaves END AS market_share,
       coalesce(c.n_contradictions, 0) AS n_contradictions,
       rp.as_of
FROM factors AS f
LEFT JOIN agg AS a USING (factor_id)
LEFT JOIN scored AS s USING (factor_id)
LEFT JOIN contra AS c USING (factor_id)
CROSS JOIN run_params AS rp
ORDER BY f.factor_id;

-- A factor's own status: failing when it has active leaves and none has a consensus (its level
-- cannot be computed); degraded when its coverage is below coverage_degraded, when its leaves
-- contradict each other, when the stale share of its active leaves reaches stale_share_degraded,
-- or when it has no active leaf; ok otherwise. `reasons` says which.
CREATE OR REPLACE TABLE factor_health AS
WITH r AS (
  SELECT b.*, n.n_with_consensus,
         list_concat(
           CASE WHEN b.n_active > 0 AND n.n_with_consensus = 0 THEN ['no active leaf has a consensus'] ELSE [] END,
           CASE WHEN b.n_active = 0 THEN ['no active leaf'] ELSE [] END,
           CASE WHEN b.coverage < hp.coverage_degraded
                THEN ['coverage ' || round(100 * b.coverage)::INTEGER || '% (' || b.n_covered || ' of ' || b.n_active || ' active leaves forecast by every model of the latest run)'] ELSE [] END,
           CASE WHEN b.n_contradictions > 0 THEN [b.n_contradictions || ' contradiction(s) among linked leaves'] ELSE [] END,
           CASE WHEN b.n_active > 0 AND b.n_stale / b.n_active >= hp.stale_share_degraded
                THEN [b.n_stale || ' of ' || b.n_active || ' active leaves stale'] ELSE [] END
         ) AS reasons
  FROM _factor_health_base AS b
  JOIN factors AS n USING (factor_id)
  CROSS JOIN _health_params AS hp
)
SELECT * EXCLUDE (n_with_consensus, reasons, as_of),
       CASE WHEN n_active > 0 AND n_with_consensus = 0 THEN 'failing' WHEN len(reasons) > 0 THEN 'degraded' ELSE 'ok' END AS status,
       reasons, as_of
FROM r
ORDER BY factor_id;

CREATE OR REPLACE TABLE _health_calls AS
WITH last_run AS (
  -- A run's as_of (not the calls' wall-clock start) places it: a run dated T made its calls for T.
  -- Runs dated at the same time: the greater run_id, as every latest of the snapshot (30_scored_forecasts).
  SELECT arg_max(r.run_id, (r.as_of, r.run_id)) AS run_id
  FROM raw_runs AS r, run_params AS rp
  WHERE r.as_of <= rp.as_of AND r.run_id IN (SELECT run_id FROM raw_model_calls)
)
-- calls: the calls sent; a call never sent (status skipped: the run's budget was spent) is neither a
-- failure nor a success, and counted it diluted the failure rate (2 failed of 10 sent read 2 of 30).
SELECT (SELECT run_id FROM last_run) AS run_id,
       count(*) FILTER (WHERE m.status <> 'skipped') AS calls,
       count(*) FILTER (WHERE m.status = 'failed') AS failed,
       count(*) FILTER (WHERE m.status = 'skipped') AS skipped,
       list(DISTINCT m.error_kind) FILTER (WHERE m.status = 'failed') AS error_kinds
FROM raw_model_calls AS m
WHERE m.run_id = (SELECT run_id FROM last_run);

CREATE OR REPLACE TABLE _health_sync AS
SELECT coalesce(
         (SELECT sync_report FROM _health_params),
         (SELECT arg_max(r.sync_report, coalesce(r.recorded_at, r.as_of)) FROM raw_runs AS r, run_params AS rp
          WHERE r.sync_report IS NOT NULL AND r.as_of <= rp.as_of)
       ) AS report;

CREATE OR REPLACE TABLE _health_prices AS
SELECT count(*) AS n_priced,
       count(*) FILTER (WHERE (epoch(rp.as_of) - epoch(q.latest_market_observed_at)) / 3600.0 > hp.stale_price_hours) AS n_stale
FROM questions AS q
CROSS JOIN run_params AS rp
CROSS JOIN _health_params AS hp
WHERE q.status = 'active' AND q.latest_market_observed_at IS NOT NULL;

CREATE OR REPLACE TABLE system_health AS
WITH checks AS (
  SELECT 1 AS ord, 'model_failures' AS "check",
         CASE WHEN c.calls > 0 THEN c.failed / c.calls END AS value,
         hp.failure_rate_degraded AS degraded_at, hp.failure_rate_failing AS failing_at,
         CASE WHEN c.calls = 0 AND c.skipped > 0
                THEN 'no model call sent in run ' || c.run_id || ': its ' || c.skipped || ' calls were skipped (the run''s budget was spent)'
              WHEN c.calls = 0 THEN 'no model calls recorded'
              ELSE c.failed || ' of ' || c.calls || ' model calls failed in run ' || c.run_id
                   || CASE WHEN c.failed > 0 THEN ' (' || array_to_string(list_sort(c.error_kinds), ', ') || ')' ELSE '' END
                   || CASE WHEN c.skipped > 0 THEN '; ' || c.skipped || ' not sent (the run''s budget was spent)' ELSE '' END
         END AS detail
  FROM _health_calls AS c, _health_params AS hp
  UNION ALL
  SELECT 2, 'venue_sync',
         CASE json_extract_string(s.report, '$.status') WHEN 'failed' THEN 1.0 WHEN 'partial' THEN 0.5 WHEN 'ok' THEN 0.0 END,
         0.5, 1.0,
         CASE WHEN s.report IS NULL THEN 'no venue sync recorded'
              WHEN json_extract_string(s.report, '$.status') = 'ok' THEN 'every venue and source synced at ' || json_extract_string(s.report, '$.at')
              ELSE 'sync ' || json_extract_string(s.report, '$.status') || ' at ' || json_extract_string(s.report, '$.at')
                   || ': failing ' || array_to_string(CAST(json_extract(s.report, '$.failed') AS VARCHAR[]), ', ')
         END
  FROM _health_sync AS s
  UNION ALL
  SELECT 3, 'stale_prices',
         CASE WHEN p.n_priced > 0 THEN p.n_stale / p.n_priced END,
         hp.stale_share_degraded, hp.stale_share_failing,
         p.n_stale || ' of ' || p.n_priced || ' active questions with a market have a price older than '
           || hp.stale_price_hours || ' h'
  FROM _health_prices AS p, _health_params AS hp
  UNION ALL
  SELECT 4, 'snapshot_age', NULL, hp.snapshot_age_degraded_hours, hp.snapshot_age_failing_hours,
         'measured by the API when served (hours since the snapshot was published)'
  FROM _health_params AS hp
)
SELECT "check", value, degraded_at, failing_at,
       CASE WHEN value IS NULL THEN 'ok' WHEN value >= failing_at THEN 'failing' WHEN value >= degraded_at THEN 'degraded' ELSE 'ok' END AS status,
       detail, rp.as_of
FROM checks, run_params AS rp
ORDER BY ord;
