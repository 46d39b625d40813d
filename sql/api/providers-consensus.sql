-- The distinct providers of every forecast in the snapshot (consensus.providers: the providers of
-- each consensus joined by ','), for the service statistics.
SELECT DISTINCT trim(unnest(string_split(providers, ','))) AS provider
FROM consensus
WHERE providers IS NOT NULL
ORDER BY provider;
