-- 80_resolved_predictions: one row per resolved (non-annulled) question with a headline
-- consensus: the headline scored consensus beside the market and the resolution's source.
-- market_observed_at: when the comparator price was observed (at or before forecast_at); the API
-- flags it stale by its age at forecast_at (QUORUM_MAX_PRICE_AGE_HOURS, bound at query time).
-- market_status (30/40): ok (a fresh comparator), stale (a price existed, older than the maximum
-- comparator age at the forecast: no comparison, counted apart) or none (no price at all), with
-- market_age_days, so that a reader can tell a stale comparator from no price.

CREATE OR REPLACE TABLE resolved_predictions AS
SELECT q.question_id, q.venue, q.venue_market_id, q.title, q.category, q.domain,
       sc.mode, sc.probability AS consensus, sc.median AS consensus_median,
       sc.logit_mean AS consensus_logit_mean, sc.n_models,
       sc.sd AS disagreement_sd, sc.range AS disagreement_range, sc.sd_logit AS disagreement_sd_logit,
       sc.market_probability, sc.outcome,
       sc.brier AS ai_error, sc.market_brier AS market_error,
       sc.created_at AS forecast_at, sc.resolved_at, sc.horizon_bucket,
       q.source_slug, q.source_name, q.source_url, q.evidence_excerpt, q.retrieved_at,
       sc.providers, sc.market_observed_at, sc.market_status, sc.market_age_days
FROM scored_consensus AS sc
JOIN questions AS q ON q.question_id = sc.question_id
WHERE sc.is_headline
ORDER BY sc.resolved_at DESC, q.question_id;
