-- 30_question_resolved: questions that are resolved or annulled in the new snapshot and were not
-- (or did not exist) in the previous one, with the outcome and the source that settled it; and a
-- resolved question whose outcome the venue amended since the previous snapshot (YES became NO):
-- announced again, previous_outcome saying what it replaces (null otherwise).
INSERT INTO _event_candidates
SELECT CASE n.status WHEN 'resolved' THEN 'question.resolved' ELSE 'question.annulled' END,
  n.question_id, n.question_id, n.category, CASE n.status WHEN 'resolved' THEN 30 ELSE 31 END,
  json_object(
    'question_id', n.question_id, 'title', n.title, 'category', n.category, 'venue', n.venue,
    'status', n.status, 'outcome', n.outcome, 'resolved_at', _ev_time(n.resolved_at),
    'annulled_reason', n.annulled_reason, 'method', n.resolution_method,
    'source', json_object('slug', n.source_slug, 'name', n.source_name, 'kind', n.source_kind,
                          'url', n.source_url, 'evidence_excerpt', n.evidence_excerpt),
    'previous_status', p.status,
    'previous_outcome', CASE WHEN p.status = 'resolved' THEN p.outcome END)
FROM ev_new_questions AS n
LEFT JOIN ev_prev_questions AS p ON p.question_id = n.question_id
WHERE n.status IN ('resolved', 'annulled')
  AND (p.question_id IS NULL OR p.status IS DISTINCT FROM n.status
       OR (n.status = 'resolved' AND p.outcome IS DISTINCT FROM n.outcome));
