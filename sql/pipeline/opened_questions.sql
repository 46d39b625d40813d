-- Which of the given question ids already have an `active` lifecycle event (a question-file
-- question imported before its created_at has none until a later sync sees created_at pass).
SELECT DISTINCT question_id FROM raw_lifecycle_events WHERE state = 'active' AND list_contains($ids, question_id);
