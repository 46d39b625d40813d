-- Every thesis id (for the 404's closest ids).
SELECT thesis_id FROM theses ORDER BY thesis_id;
