-- Coherence across the book (99_scenario_9_coherence.sql): per forecaster and check, the rate of
-- violations of the laws of probability. Shown by GET /api/events/service_stats/ and
-- GET /api/factors/health/.
SELECT c.* FROM coherence AS c ORDER BY c.forecaster, c."check" = 'all' DESC, c."check";
