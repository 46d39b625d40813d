-- The recorded lifecycle of one question in time order: by `at`, then by the state's place in the
-- lifecycle (proposed, active, closed, resolved, annulled), then by the stored seq; `seq` is
-- renumbered 1.. in that order (a stored seq that disagrees with the times never reorders states).
-- Parameters: $question_id VARCHAR.
SELECT row_number() OVER (
         ORDER BY "at" NULLS LAST, list_position(['proposed', 'active', 'closed', 'resolved', 'annulled'], state) NULLS LAST,
                  seq, reason
       ) AS seq,
       state, "at", reason
FROM lifecycle
WHERE question_id = $question_id
ORDER BY seq;
