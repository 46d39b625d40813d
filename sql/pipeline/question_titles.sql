-- The title of every question created by $as_of, as known at $as_of: the version of the question
-- ingested latest by then, as active_questions.sql reads the run's open questions (a question with
-- no version ingested by $as_of has no title: its only text was written later). The earlier components of a scenario's
-- conditional questions may be closed or resolved, so they are not among the run's open questions.
-- A question created later did not exist at $as_of: a run dated then must not assume its outcome
-- (QA: a run dated 2025-10-16 conditioned on questions opened months later), and a title edited
-- after $as_of (an edited question file's new version) is not what the run could have shown (QA:
-- the latest title was taken whatever the as-of).
-- outcome: the question's resolution visible at $as_of (the latest by resolved_at, then
-- retrieved_at, as sql/derive/10_questions.sql reads it) when it is YES (1) or NO (0), else NULL
-- (open, annulled): the conditional tasks ask first the conditions that agree with it
-- (pipeline/scenarios/conditional-tasks.ts).
WITH known AS (
  SELECT question_id, title, created_at FROM raw_questions
  WHERE ingested_at <= $as_of
  QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at DESC) = 1
),
resolved AS (
  SELECT question_id, arg_max({'outcome': outcome}, (resolved_at, retrieved_at)).outcome AS outcome
  FROM raw_resolutions
  WHERE resolved_at <= $as_of
  GROUP BY question_id
)
SELECT k.question_id, k.title, CASE WHEN r.outcome IN (0, 1) THEN r.outcome::INTEGER END AS outcome
FROM known AS k
LEFT JOIN resolved AS r USING (question_id)
WHERE k.created_at IS NULL OR k.created_at <= $as_of;
