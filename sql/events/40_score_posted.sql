-- 40_score_posted: for each question resolved by this run (a question.resolved candidate), the
-- Brier scores of its headline consensus, of each model in that mode and of the market
-- comparator (NULL when the consensus had no fresh market price). A resolved question nobody
-- forecast has no score to post.
INSERT INTO _event_candidates
SELECT 'score.posted', c.question_id, c.question_id, r.category, 40,
  json_object(
    'question_id', c.question_id, 'category', r.category, 'outcome', c.outcome,
    'resolved_at', _ev_time(c.resolved_at), 'mode', c.mode,
    'consensus', json_object('probability', _ev_p(c.probability), 'brier', _ev_p(c.brier), 'n_models', c.n_models),
    'market', json_object('probability', _ev_p(c.market_probability), 'brier', _ev_p(c.market_brier),
                          'status', c.market_status),
    'models', coalesce((
      SELECT list(json_object('model', f.model, 'probability', _ev_p(f.probability), 'brier', _ev_p(f.brier))
                  ORDER BY f.model)
      FROM ev_new_scored_forecasts AS f
      WHERE f.question_id = c.question_id AND f.mode = c.mode), []))
FROM ev_new_scored_consensus AS c
JOIN _event_candidates AS r ON r.type = 'question.resolved' AND r.question_id = c.question_id
WHERE c.is_headline;
