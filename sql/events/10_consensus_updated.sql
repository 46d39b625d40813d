-- 10_consensus_updated: the headline consensus of an active question moved by at least
-- $threshold (probability points) since the previous snapshot. A question with no headline
-- consensus in the previous snapshot has not moved (its first consensus is no update).
-- The difference is rounded to 9 decimals so 0.55 - 0.50 counts as exactly 0.05. `previous_mode`
-- is the mode of the previous consensus: a question's headline mode can change between runs
-- (evidence found for it, the augmented mode now scored), and a move across modes is not a move
-- of one forecast (it was not said).
INSERT INTO _event_candidates
SELECT 'consensus.updated', n.question_id, n.question_id, n.category, 10,
  json_object(
    'question_id', n.question_id, 'title', n.title, 'category', n.category, 'mode', n.mode, 'previous_mode', p.mode,
    'consensus', _ev_p(n.consensus), 'previous', _ev_p(p.consensus), 'change', _ev_p(n.consensus - p.consensus),
    'n_models', n.n_models, 'disagreement_sd', _ev_p(n.disagreement_sd),
    'market_probability', _ev_p(n.market_probability), 'run_id', n.run_id, 'previous_run_id', p.run_id)
FROM ev_new_active_predictions AS n
JOIN ev_prev_active_predictions AS p ON p.question_id = n.question_id
WHERE round(abs(n.consensus - p.consensus), 9) >= $threshold;
