-- Service statistics: question counts and four-model coverage per (category, venue).
-- questions: every visible question; active/closed/resolved/annulled: by status as of the snapshot;
-- forecast: questions with at least one consensus; all_models: questions whose LATEST run's
-- consensus had all four models answering (n_models >= 4 in at least one mode of that run).
-- Computed here rather than as a derived table (the published-table list is a contract of
-- sql/derive); the API caches the answer per snapshot.
WITH per_run AS (
  SELECT question_id, run_id, max(created_at) AS created_at, max(n_models) AS n_models
  FROM consensus
  GROUP BY question_id, run_id
),
latest AS (
  SELECT question_id, arg_max(n_models, (created_at, run_id)) AS n_models -- (ties: the greater run_id, as the snapshot's)
  FROM per_run
  GROUP BY question_id
)
SELECT
  coalesce(q.category, 'unknown') AS category,
  coalesce(q.venue, 'unknown') AS venue,
  count(*) AS questions,
  count(*) FILTER (WHERE q.status = 'active') AS active,
  count(*) FILTER (WHERE q.status = 'closed') AS closed,
  count(*) FILTER (WHERE q.status = 'resolved') AS resolved,
  count(*) FILTER (WHERE q.status = 'annulled') AS annulled,
  count(l.question_id) AS forecast,
  count(*) FILTER (WHERE l.n_models >= 4) AS all_models
FROM questions AS q
LEFT JOIN latest AS l USING (question_id)
GROUP BY ALL
ORDER BY category, venue;
