-- 20_edge_opened: |consensus - market| of an active question reached $threshold (as published, to 6
-- decimals: _ev_edge, the edges list's min_edge comparison), and it was
-- below it (or the question had no edge) in the previous snapshot; or it was at least $threshold
-- on the other side of the market (a reversal: the consensus or the market crossed the other),
-- `previous_edge` then having the other sign. A reversal is no edge.closed: the edge is open, in
-- the other direction (QA: a market that crossed the consensus announced nothing, and a
-- subscriber kept the old direction).
INSERT INTO _event_candidates
SELECT 'edge.opened', n.question_id, n.question_id, n.category, 20,
  json_object(
    'question_id', n.question_id, 'title', n.title, 'category', n.category, 'mode', n.mode,
    'edge', _ev_p(n.edge), 'abs_edge', _ev_p(n.abs_edge), 'direction', n.direction, 'consensus', _ev_p(n.consensus),
    'market_probability', _ev_p(n.market_probability), 'market_observed_at', _ev_time(n.market_observed_at),
    'previous_edge', _ev_p(p.edge), 'threshold', $threshold)
FROM ev_new_edges AS n
LEFT JOIN ev_prev_edges AS p ON p.question_id = n.question_id
WHERE _ev_edge(n.abs_edge) >= $threshold
  AND (p.question_id IS NULL OR _ev_edge(p.abs_edge) < $threshold OR sign(p.edge) <> sign(n.edge));
