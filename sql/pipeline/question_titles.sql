-- The latest ingested title of every question created by $as_of (the earlier components of a
-- scenario's conditional questions may be closed or resolved, so they are not among the run's open
-- questions). A question created later did not exist at $as_of: a run dated then must not assume
-- its outcome (QA: a run dated 2025-10-16 conditioned on questions opened months later).
SELECT question_id, arg_max(title, ingested_at) AS title
FROM raw_questions
GROUP BY question_id
HAVING bool_or(created_at IS NULL OR created_at <= $as_of);
