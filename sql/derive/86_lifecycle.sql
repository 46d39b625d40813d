-- 86_lifecycle: every visible question's lifecycle (proposed -> active -> closed -> resolved |
-- annulled) as recorded in raw lifecycle_events up to as_of, deduplicated and ordered. Events may
-- have been recorded out of order (a market can resolve before its scheduled close): `seq` orders
-- them by time, then by the state's place in the lifecycle. (`at` is a reserved word: quoted.)
-- Resolved and annulled are terminal: a `closed` event after the question's first terminal event
-- (the market's scheduled close, reached after it resolved early) is no change of state and is left
-- out, so the last state is the question's status; so are a `proposed` and an `active` one (a
-- question file's entry added after FRED published its data: the sync importing it records them at
-- its own time and resolves it at once, dated the earlier first-release day, and the lifecycle read
-- resolved, proposed, active). Likewise a `proposed` event after the question's
-- first `active` one: a question file imports a question opened in the past with `proposed` at the
-- import time (data/questions/README.md), which came last, after `active`, `closed` and even
-- `resolved`, so the lifecycle's last state read "proposed" for a resolved question.

CREATE OR REPLACE TABLE lifecycle AS
WITH events AS (
  SELECT DISTINCT e.question_id, e.state, e."at", e.reason
  FROM raw_lifecycle_events AS e
  JOIN questions AS q ON q.question_id = e.question_id
  CROSS JOIN run_params AS rp
  WHERE e."at" <= rp.as_of
),
terminal AS (
  SELECT question_id, min("at") AS terminal_at
  FROM events
  WHERE state IN ('resolved', 'annulled')
  GROUP BY question_id
),
opened AS (
  SELECT question_id, min("at") AS active_at
  FROM events
  WHERE state = 'active'
  GROUP BY question_id
)
SELECT question_id, state, "at", reason,
       row_number() OVER (
         PARTITION BY question_id
         ORDER BY "at", list_position(['proposed', 'active', 'closed', 'resolved', 'annulled'], state), reason
       ) AS seq
FROM events AS e
LEFT JOIN terminal AS t USING (question_id)
LEFT JOIN opened AS o USING (question_id)
WHERE NOT (e.state IN ('proposed', 'active', 'closed') AND t.terminal_at IS NOT NULL AND e."at" > t.terminal_at)
  AND NOT (e.state = 'proposed' AND o.active_at IS NOT NULL AND e."at" > o.active_at)
ORDER BY question_id, seq;
