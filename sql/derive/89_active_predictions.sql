-- 89_active_predictions: one row per active question with a headline consensus (the prediction
-- feeds: GET /api/predictions/lang/{lang}, GET /api/events/lang/{lang}/).
--
-- The headline consensus is the question's latest consensus in the first mode of
-- run_params.headline_modes that has one: `_headline_latest` of 85_edges.sql (so a question's
-- edge and its prediction always show the same run). Beside it: the market's latest probability at
-- or before as_of (from `questions`; null when the question has no price), the disagreement of that
-- consensus, and `langs`: the reasoning languages present among the latest_forecasts of the
-- headline run (sorted; empty when no forecast recorded a language). Newest consensus first.

CREATE OR REPLACE TABLE active_predictions AS
SELECT
  q.question_id, q.venue, q.venue_market_id, q.title, q.url, q.category, q.domain, q.tags,
  q.created_at, q.close_time, q.lang AS question_lang,
  h.mode, h.run_id, h.created_at AS forecast_at,
  h.mean AS consensus, h.median AS consensus_median, h.logit_mean AS consensus_logit_mean,
  h.n_models, h.sd AS disagreement_sd, h.range AS disagreement_range,
  h.sd_logit AS disagreement_sd_logit, h.providers,
  q.latest_market_probability AS market_probability,
  q.latest_market_observed_at AS market_observed_at,
  coalesce(l.langs, []::VARCHAR[]) AS langs
FROM _headline_latest AS h
JOIN questions AS q ON q.question_id = h.question_id
LEFT JOIN (
  SELECT question_id, mode, run_id, list_sort(list(lang)) AS langs
  FROM (SELECT DISTINCT question_id, mode, run_id, lang FROM latest_forecasts WHERE lang IS NOT NULL)
  GROUP BY question_id, mode, run_id
) AS l ON l.question_id = h.question_id AND l.mode = h.mode AND l.run_id = h.run_id
ORDER BY h.created_at DESC, q.question_id;
