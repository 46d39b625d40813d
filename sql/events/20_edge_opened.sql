-- 20_edge_opened: |consensus - market| of an active question reached $threshold, and it was
-- below it (or the question had no edge) in the previous snapshot.
INSERT INTO _event_candidates
SELECT 'edge.opened', n.question_id, n.question_id, n.category, 20,
  json_object(
    'question_id', n.question_id, 'title', n.title, 'category', n.category, 'mode', n.mode,
    'edge', n.edge, 'abs_edge', n.abs_edge, 'direction', n.direction, 'consensus', n.consensus,
    'market_probability', n.market_probability, 'market_observed_at', n.market_observed_at,
    'previous_edge', p.edge, 'threshold', $threshold)
FROM ev_new_edges AS n
LEFT JOIN ev_prev_edges AS p ON p.question_id = n.question_id
WHERE round(n.abs_edge, 9) >= $threshold
  AND (p.question_id IS NULL OR round(p.abs_edge, 9) < $threshold);
