-- GET /api/analysis/resolution-sources/: every source of resolutions, most resolutions first.
SELECT *
FROM resolution_sources
ORDER BY resolutions DESC, source_slug;
