-- Every model's scored forecast of one resolved question per mode (scored_forecasts), with its
-- scores and market comparator (stale by its age at the forecast's created_at), and its texts in
-- every language (scored_forecast_texts): one row per (mode, model, lang); per model the answer as
-- given first, then its translations by language. A scored forecast without text rows still
-- appears once (has_text false).
-- Parameters: $question_id VARCHAR, $max_price_age_hours DOUBLE.
SELECT s.mode, s.model, s.run_id, s.created_at, s.probability, s.provider, s.outcome, s.brier, s.log_loss,
       s.direction, s.market_probability, s.market_observed_at, s.market_brier, s.market_log_loss,
       CASE WHEN s.market_probability IS NOT NULL
            THEN (epoch(s.created_at) - epoch(s.market_observed_at)) / 3600.0 > $max_price_age_hours END AS market_stale,
       t.question_id IS NOT NULL AS has_text, t.lang, t.reasoning, t.key_factors, t.evidence_ids, t.translation_of
FROM scored_forecasts AS s
LEFT JOIN scored_forecast_texts AS t
  ON t.question_id = s.question_id AND t.mode = s.mode AND t.model = s.model AND t.run_id = s.run_id
WHERE s.question_id = $question_id
ORDER BY s.mode, s.model, t.translation_of IS NOT NULL, t.lang NULLS LAST;
