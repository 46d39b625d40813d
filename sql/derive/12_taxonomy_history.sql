-- 12_taxonomy_history: each visible question's taxonomy (category, domain, tags) as it changed over
-- its stored versions (raw questions, every version whatever the as_of, as 10_questions takes the
-- latest: the last row of a question is its taxonomy in `questions`). One row for the first stored
-- version, then one for each version whose taxonomy differs from the version before it; versions
-- that changed something else alone (a close time the venue moved) are left out.
-- `change`: first_stored; reclassified (the text, title, description and resolution criteria, is
-- the version before's: the taxonomy rules changed, pipeline/taxonomy/reclassify.ts); edited (the
-- text changed too: a question file's edit, a later ForecastBench round).
-- `since`: the version's ingested_at, when Quorum stored it. previous_category and previous_domain
-- are NULL for first_stored, previous_tags [] (a list is never NULL in a published table).

CREATE OR REPLACE TABLE taxonomy_history AS
WITH versions AS (
  SELECT r.question_id, r.ingested_at, r.category, r.domain, coalesce(r.tags, []::VARCHAR[]) AS tags,
         r.title, r.description, r.resolution_criteria
  FROM raw_questions AS r
  SEMI JOIN questions AS q ON q.question_id = r.question_id
),
compared AS (
  SELECT *,
         row_number() OVER w AS version,
         lag(category) OVER w AS previous_category,
         lag(domain) OVER w AS previous_domain,
         lag(tags) OVER w AS previous_tags,
         lag(title) OVER w AS previous_title,
         lag(description) OVER w AS previous_description,
         lag(resolution_criteria) OVER w AS previous_criteria
  FROM versions
  WINDOW w AS (PARTITION BY question_id ORDER BY ingested_at)
),
changes AS (
  SELECT question_id, ingested_at AS since, category, domain, tags, previous_category, previous_domain, previous_tags,
         CASE
           WHEN version = 1 THEN 'first_stored'
           WHEN title IS NOT DISTINCT FROM previous_title AND description IS NOT DISTINCT FROM previous_description
                AND resolution_criteria IS NOT DISTINCT FROM previous_criteria THEN 'reclassified'
           ELSE 'edited'
         END AS change
  FROM compared
  WHERE version = 1
     OR category IS DISTINCT FROM previous_category
     OR domain IS DISTINCT FROM previous_domain
     OR tags IS DISTINCT FROM previous_tags
)
SELECT question_id,
       row_number() OVER (PARTITION BY question_id ORDER BY since) AS seq,
       since, change, category, domain, tags, previous_category, previous_domain,
       coalesce(previous_tags, []::VARCHAR[]) AS previous_tags
FROM changes
ORDER BY question_id, seq;
