-- 21_edge_closed: an edge that was at least $threshold in the previous snapshot is now below it,
-- or gone (the question closed, resolved or lost its price or consensus: `reason` says which).
INSERT INTO _event_candidates
SELECT 'edge.closed', p.question_id, p.question_id, p.category, 21,
  json_object(
    'question_id', p.question_id, 'title', p.title, 'category', p.category,
    'edge', _ev_p(n.edge), 'abs_edge', _ev_p(n.abs_edge), 'previous_edge', _ev_p(p.edge), 'threshold', $threshold,
    'reason', CASE
      WHEN n.question_id IS NOT NULL THEN 'below_threshold'
      WHEN q.status IN ('closed', 'resolved', 'annulled') THEN q.status
      ELSE 'no_edge'
    END)
FROM ev_prev_edges AS p
LEFT JOIN ev_new_edges AS n ON n.question_id = p.question_id
LEFT JOIN ev_new_questions AS q ON q.question_id = p.question_id
WHERE _ev_edge(p.abs_edge) >= $threshold
  AND (n.question_id IS NULL OR _ev_edge(n.abs_edge) < $threshold);
