-- Which of the given question ids are already stored (so their first-seen lifecycle events are
-- not written again on every sync).
SELECT DISTINCT question_id FROM raw_questions WHERE list_contains($ids, question_id);
