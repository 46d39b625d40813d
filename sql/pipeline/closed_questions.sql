-- Which of the given question ids have `closed` as their latest lifecycle state, in
-- sql/derive/86_lifecycle.sql's order (time, then the state's place in the lifecycle); `proposed`
-- is left out, as 86 leaves it out after `active` (a question file's import event comes after a
-- past close). The question-file sync reopens such a question when its file's close_time is ahead:
-- a version before the reopen rule wrote the extended close without an `active` event (QA upgrade
-- pass).
SELECT question_id
FROM raw_lifecycle_events
WHERE list_contains($ids, question_id) AND state <> 'proposed'
QUALIFY row_number() OVER (
  PARTITION BY question_id
  ORDER BY "at" DESC, list_position(['active', 'closed', 'resolved', 'annulled'], state) DESC
) = 1 AND state = 'closed';
