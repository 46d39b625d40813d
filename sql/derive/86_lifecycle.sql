-- 86_lifecycle: every visible question's lifecycle (proposed -> active -> closed -> resolved |
-- annulled) as recorded in raw lifecycle_events up to as_of, deduplicated and ordered. Events may
-- have been recorded out of order (a market can resolve before its scheduled close): `seq` orders
-- them by time, then by the state's place in the lifecycle. (`at` is a reserved word: quoted.)

CREATE OR REPLACE TABLE lifecycle AS
WITH events AS (
  SELECT DISTINCT e.question_id, e.state, e."at", e.reason
  FROM raw_lifecycle_events AS e
  JOIN questions AS q ON q.question_id = e.question_id
  CROSS JOIN run_params AS rp
  WHERE e."at" <= rp.as_of
)
SELECT question_id, state, "at", reason,
       row_number() OVER (
         PARTITION BY question_id
         ORDER BY "at", list_position(['proposed', 'active', 'closed', 'resolved', 'annulled'], state), reason
       ) AS seq
FROM events
ORDER BY question_id, seq;
