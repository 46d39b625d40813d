-- 00_candidates: the events one run found, before they get ids and sequence numbers.
-- Every later file of sql/events/ inserts into this table; number.sql turns it into `events` rows.
-- ord orders the types within a run (the sequence follows it, then subject).
CREATE OR REPLACE TEMP TABLE _event_candidates (
  type VARCHAR, subject VARCHAR, question_id VARCHAR, category VARCHAR, ord INTEGER, data JSON
);
