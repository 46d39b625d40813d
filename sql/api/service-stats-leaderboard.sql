-- Model leaderboard: every forecaster (each model, the consensus, the market) in the headline
-- mode (each question's headline mode), ranked by Brier score (lower is better; ties share a rank).
SELECT
  forecaster,
  n,
  brier,
  log_loss,
  accuracy_pct,
  ece,
  rank() OVER (ORDER BY brier ASC NULLS LAST) AS rank
FROM calibration_summary
WHERE mode = 'headline'
ORDER BY rank, forecaster;
