-- Questions a run dated $as_of leaves out because the warehouse had no text of them by then: opened
-- by $as_of and, by their first version, not closed, resolved or annulled then, but first written
-- later (a market a later sync discovered, a ForecastBench question first in a later round, a
-- question file imported later). active_questions.sql does not forecast them (their only text is
-- a later one, with later edits); the run counts them so a backtest in a fresh directory does not
-- come out empty without a word (pipeline/run.ts writtenLaterNote).
WITH first AS (
  SELECT * FROM raw_questions
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at) = 1
)
SELECT count(*)::INTEGER AS n
FROM first q
WHERE q.ingested_at > $as_of
  AND (q.created_at IS NULL OR q.created_at <= $as_of)
  AND (q.close_time IS NULL OR q.close_time > $as_of)
  AND q.question_id NOT IN (SELECT question_id FROM raw_resolutions WHERE resolved_at <= $as_of);
