-- One thesis (GET /api/clusters/{id}/). Parameters: $thesis_id VARCHAR.
SELECT t.* FROM theses AS t WHERE t.thesis_id = $thesis_id;
