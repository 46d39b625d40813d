-- GET /api/factors/health/: the system's health checks of the snapshot (99_factor_2_health.sql).
SELECT s.* FROM system_health AS s;
