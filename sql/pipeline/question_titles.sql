-- The title of every question created by $as_of, as known at $as_of: the version of the question
-- ingested latest by then (a question first ingested later, by a backfill, as first ingested), as
-- active_questions.sql reads the run's open questions. The earlier components of a scenario's
-- conditional questions may be closed or resolved, so they are not among the run's open questions.
-- A question created later did not exist at $as_of: a run dated then must not assume its outcome
-- (QA: a run dated 2025-10-16 conditioned on questions opened months later), and a title edited
-- after $as_of (an edited question file's new version) is not what the run could have shown (QA:
-- the latest title was taken whatever the as-of).
WITH known AS (
  SELECT question_id, title, created_at FROM raw_questions
  QUALIFY row_number() OVER (
    PARTITION BY question_id
    ORDER BY CASE WHEN ingested_at <= $as_of THEN ingested_at END DESC NULLS LAST, ingested_at
  ) = 1
)
SELECT question_id, title
FROM known
WHERE created_at IS NULL OR created_at <= $as_of;
