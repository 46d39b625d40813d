-- 20_edge_opened: |consensus - market| of an active question reached $threshold, and it was
-- below it (or the question had no edge) in the previous snapshot.
INSERT INTO _event_candidates
SELECT 'edge.opened', n.question_id, n.question_id, n.category, 20,
  json_object(
    'question_id', n.question_id, 'title', n.title, 'category', n.category, 'mode', n.mode,
    'edge', _ev_p(n.edge), 'abs_edge', _ev_p(n.abs_edge), 'direction', n.direction, 'consensus', _ev_p(n.consensus),
    'market_probability', _ev_p(n.market_probability), 'market_observed_at', _ev_time(n.market_observed_at),
    'previous_edge', _ev_p(p.edge), 'threshold', $threshold)
FROM ev_new_edges AS n
LEFT JOIN ev_prev_edges AS p ON p.question_id = n.question_id
WHERE round(n.abs_edge, 9) >= $threshold
  AND (p.question_id IS NULL OR round(p.abs_edge, 9) < $threshold);
