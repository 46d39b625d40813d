-- 87_latest_forecasts: what each model said in the latest run of every active question, per mode
-- and reasoning language (the model-by-model view of the prediction endpoints).
--
-- For each question that is active at as_of and each mode: the latest run of that mode is the run
-- of the question's latest `consensus` row in the mode (by created_at), i.e. the run whose
-- consensus the API shows beside these forecasts. That row is `_latest_consensus_by_mode` of
-- 85_edges.sql (active questions only; computed once, read here). The run's forecasts (created at
-- or before as_of, with a probability) are published one row per (question, mode, model, lang):
-- a call asked for several languages yields one raw row per language with the same probability,
-- the first language's with translation_of NULL, each other one naming the language it translates
-- (pipeline/forecast/README.md). The raw natural key (run, question, model, mode, lang) makes these
-- rows unique.
--
-- Cost design (10 M forecasts): one hash join of the raw forecasts against the small build side
-- (active question x mode: its latest run); no window ranking, no re-aggregation and no sort of
-- the wide rows (reasoning is the bulk of the table). Rows are in no particular order.

CREATE OR REPLACE TABLE latest_forecasts AS
SELECT f.question_id, f.mode, f.model, f.lang, f.run_id, f.created_at, f.probability,
       f.reasoning, f.key_factors, f.evidence_ids, f.provider, f.translation_of
FROM raw_forecasts AS f
JOIN _latest_consensus_by_mode AS l
  ON l.question_id = f.question_id AND l.mode = f.mode AND l.run_id = f.run_id
WHERE f.created_at <= (SELECT as_of FROM run_params)
  AND f.probability IS NOT NULL
  AND f.condition IS NULL;
