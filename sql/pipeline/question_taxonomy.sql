-- The latest stored version of every question that no question file defines (venue <> $file_venue):
-- what each sync classifies again under the current taxonomy rules (pipeline/taxonomy/reclassify.ts).
-- A question file's questions are classified from their file at every sync (pipeline/sync.ts
-- editedQuestionVersions), and a category written there is the operator's.
SELECT unnest(arg_max(q, q.ingested_at))
FROM raw_questions AS q
WHERE q.venue <> $file_venue
GROUP BY q.question_id
ORDER BY 1;
