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
-- An absolute edge as GET /api/predictions/edges/ compares it with min_edge (sql/api/edges-page.sql:
-- as published, 6 decimals on its decimal value), so that an edge the list shows at the threshold
-- (0.0499996, published 0.05) has reached it here too (QA: compared at 9 decimals, it opened no
-- edge, and an edge falling to it was closed 'below_threshold' with abs_edge 0.05).
CREATE OR REPLACE TEMP MACRO _ev_edge(x) AS round(x::DECIMAL(18, 15), 6);
