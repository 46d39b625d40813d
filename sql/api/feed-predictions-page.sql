-- One page of active predictions with reasoning in the language, by question_id, keyset-paginated; each
-- with the models' forecasts of its headline run in that language (`models`, by model id).
-- market_stale: the market price is older than $max_price_age_hours at as_of ($as_of_s, epoch
-- seconds); NULL without a price.
-- Parameters: $langs VARCHAR[] (every code the language is stored under: pt-BR and pt-br, he and iw; api/routes/prediction-params.ts storedLanguages), $category VARCHAR|NULL, $venue VARCHAR|NULL, $after BOOLEAN,
-- $after_question_id VARCHAR|NULL, $limit BIGINT (page size + 1),
-- $as_of_s DOUBLE, $max_price_age_hours DOUBLE.
WITH page AS (
  SELECT *
  FROM active_predictions
  WHERE list_has_any(langs, $langs)
    AND ($category IS NULL OR category = $category)
    AND ($venue IS NULL OR venue = $venue)
    AND (NOT $after OR question_id > $after_question_id)
  ORDER BY question_id
  LIMIT $limit
),
models AS (
  SELECT lf.question_id,
         list({'model': lf.model, 'provider': lf.provider, 'probability': lf.probability,
               'reasoning': lf.reasoning, 'key_factors': lf.key_factors, 'created_at': lf.created_at}
              ORDER BY lf.model) AS models
  FROM latest_forecasts AS lf
  JOIN page AS p ON p.question_id = lf.question_id AND p.mode = lf.mode AND p.run_id = lf.run_id
  WHERE list_contains($langs, lf.lang)
  GROUP BY lf.question_id
)
SELECT p.question_id, p.venue, p.venue_market_id, p.title, p.url, p.category, p.domain, p.tags,
       p.close_time, p.mode, p.run_id, p.forecast_at, p.consensus, p.consensus_median,
       p.consensus_logit_mean, p.n_models, p.disagreement_sd, p.disagreement_range,
       p.disagreement_sd_logit, p.providers, p.market_probability, p.market_observed_at,
       ($as_of_s - epoch(p.market_observed_at)) / 3600.0 > $max_price_age_hours AS market_stale,
       coalesce(m.models, []) AS models
FROM page AS p
LEFT JOIN models AS m ON m.question_id = p.question_id
ORDER BY p.question_id;
