-- 00_candidates: the events one run found, before they get ids and sequence numbers.
-- Every later file of sql/events/ inserts into this table; number.sql turns it into `events` rows.
-- ord orders the types within a run (the sequence follows it, then subject).
CREATE OR REPLACE TEMP TABLE _event_candidates (
  type VARCHAR, subject VARCHAR, question_id VARCHAR, category VARCHAR, ord INTEGER, data JSON
);

-- Event payloads follow the API's conventions (README, "Timestamps and precision"): instants as
-- ISO 8601 UTC with milliseconds and Z, probabilities and their differences to 6 decimals.
CREATE OR REPLACE TEMP MACRO _ev_time(t) AS strftime(t::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%gZ');
CREATE OR REPLACE TEMP MACRO _ev_p(x) AS round(x, 6);
