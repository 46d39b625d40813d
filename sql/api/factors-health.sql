-- GET /api/factors/health/: every factor's health (99_factor_2_health.sql), by factor_id.
SELECT h.* FROM factor_health AS h ORDER BY h.factor_id;
