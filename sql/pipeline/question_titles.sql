-- The latest ingested title of every question (the earlier components of a scenario's conditional
-- questions may be closed or resolved, so they are not among the run's open questions).
SELECT question_id, arg_max(title, ingested_at) AS title
FROM raw_questions
GROUP BY question_id;
