-- Model leaderboard: every forecaster (each model, the consensus, the market) in the headline
-- mode (each question's headline mode), on the same questions (those every one of them scored:
-- see headline_leaderboard in sql/derive/70_calibration.sql), ranked by Brier score (lower is
-- better; ties share a rank).
SELECT forecaster, n, brier, log_loss, accuracy_pct, ece, rank
FROM headline_leaderboard
ORDER BY rank, forecaster;
