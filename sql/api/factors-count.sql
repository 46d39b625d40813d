-- GET /api/factors/: the number of anchor factors.
SELECT count(*) AS total FROM factors;
