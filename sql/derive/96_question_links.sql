-- 96_question_links: links between questions (issue 12, DESIGN §10): pairs (a, b) with
-- kind similar | same_event | implies | excludes, sign (+1, or -1 when YES of one is NO of the
-- other), strength 0..1 and origin computed | curated.
--
-- Inputs beside `questions`: the pipeline's structure stage (pipeline/structure/stage.ts) fills
-- _structure_params, _structure_links (the curated files of data/structure/links/) and the thesis
-- tables of 97_theses.sql before the derive runs; without it (tests of other tables, an empty
-- warehouse) they are created empty here with the default parameters.
--
-- Computed links, text similarity (TF-IDF cosine):
--  * documents: `text` = title + description, `title` = the title alone; HTML tags and character
--    references removed (_link_plain_text), lower-cased, split on
--    anything that is not a-z or 0-9, tokens of one letter and the stop words below dropped
--    (digits kept: "claude 5", years and prices tell questions apart).
--  * weight of a term in a document: tf * ln(N / df), N = the questions, df = the questions whose
--    document (same field) holds the term, tf = occurrences; each document's vector is scaled to
--    unit length, so the dot product of two vectors is their cosine. A term in every document
--    weighs 0.
--  * blocking: two questions are compared only within one taxonomy category and only when they
--    share at least one term that at most max_term_df documents of that category hold (a term
--    shared by much of the block carries little weight, and pairing on it would be quadratic);
--    pairs whose shared rare terms plus the most their common terms could add (Cauchy-Schwarz
--    bound) stay below every threshold are dropped unexamined. The cosine of the others is the
--    full dot product over every shared term.
--  * similar: text cosine >= similar_threshold, a < b; sign -1 when exactly one of the two titles
--    is negated, as for same_event below (QA: a question and its negation on one venue, no
--    same_event as that needs two, were a similar link of sign 1, a clustering edge of
--    97_theses.sql: the negation joined the event's computed thesis as if it agreed).
--  * same_event: title cosine >= same_event_threshold, different venues, and the numbers (every
--    token with a digit, an ordinal as its number: "1st" is 1, "$90k" is 90k) and
--    month names of one title (years, dates, prices; "July", "Sept") all in the other's (2025 vs
--    2026, March 15 vs March 31, "in 2025" vs "before July" are different events; a title that
--    omits the year is not), a < b. Negation
--    markers (not, no; a contraction such as "won't" or "doesn't" is read as "will not", "does
--    not"; "No." before a number, "No. 1", is the word number) are stop words, so "Will X happen" and "Will X not happen" match; sign is
--    -1 when exactly one of the two titles is negated (an odd number of markers).
-- Curated links (origin curated) come first: a computed link of the same (a, b, kind) is dropped.
-- Symmetric kinds are stored with a < b; implies keeps its direction (a implies b). Links whose
-- questions are not in this snapshot are left out.
--
-- Cost (`npm run bench -- scoring`: 212,586 questions, none linked; the file alone, 2 threads):
-- about 2.1 s of CPU, 1.1 s of statements on an idle machine, most of it splitting the texts into
-- tokens (_link_docs), counting terms (_link_terms) and weighting them (_link_vectors). The
-- pairing works on integer document numbers, not question ids; a regular expression runs only
-- on a text that holds what it looks for; a title's negation and date tokens are read only for
-- the pairs found.

CREATE TEMP TABLE IF NOT EXISTS _structure_params AS
SELECT 0.35::DOUBLE AS similar_threshold, 0.6::DOUBLE AS same_event_threshold,
       0.5::DOUBLE AS cluster_threshold, 100::INTEGER AS max_term_df,
       40::INTEGER AS max_cluster_size, NULL::VARCHAR AS run_id;

CREATE TEMP TABLE IF NOT EXISTS _structure_links
  (a VARCHAR, b VARCHAR, kind VARCHAR, sign INTEGER, strength DOUBLE);

CREATE OR REPLACE TABLE _link_stopwords AS
SELECT unnest([
  'a', 'about', 'above', 'according', 'after', 'again', 'against', 'all', 'also', 'am', 'an', 'and',
  'any', 'are', 'as', 'at', 'be', 'because', 'been', 'before', 'being', 'below', 'between', 'both',
  'but', 'by', 'can', 'could', 'did', 'do', 'does', 'doing', 'during', 'each', 'either', 'end',
  'et', 'ever', 'few', 'for', 'from', 'further', 'had', 'has', 'have', 'having', 'he', 'her',
  'here', 'hers', 'him', 'his', 'how', 'if', 'in', 'into', 'is', 'it', 'its', 'itself', 'just',
  'least', 'less', 'may', 'me', 'might', 'more', 'most', 'much', 'must', 'my', 'neither', 'no',
  'nor', 'not', 'now', 'of', 'off', 'on', 'once', 'one', 'only', 'or', 'other', 'our', 'out',
  'over', 'own', 'per', 'question', 'resolve', 'resolves', 'resolved', 'same', 'shall', 'she',
  'should', 'so', 'some', 'such', 'than', 'that', 'the', 'their', 'them', 'then', 'there', 'these',
  'they', 'this', 'those', 'through', 'to', 'too', 'under', 'until', 'up', 'upon', 'us', 'very',
  'was', 'we', 'were', 'what', 'when', 'where', 'whether', 'which', 'while', 'who', 'whom', 'why',
  'will', 'with', 'within', 'would', 'yes', 'yet', 'you', 'your', 'https', 'http', 'www', 'com'
]) AS term;

-- A venue's text as words: HTML tags and character references dropped (INFER's descriptions are
-- HTML: `<a href="…" target="_blank">`, `<div>`, `<li>` made "div" and "li" terms that linked
-- questions by their markup and named a computed thesis "div, mirror, li"). A tag is `<` or `</`
-- then a letter, so "x < 5" is left alone. Only a text holding `<` or `&` can match, and only
-- those pay the regular expression (most of a corpus does not: the same words, cheaper).
CREATE OR REPLACE TEMP MACRO _link_plain_text(s) AS
  CASE WHEN contains(s, '<') OR contains(s, '&')
       THEN regexp_replace(s, '</?[A-Za-z][^<>]*>|&#?[A-Za-z0-9]+;', ' ', 'g') ELSE s END;

-- A lower-cased plain text's negating contractions spelled out ("won't" → "will not",
-- "can't" → "can not", "doesn’t" → "does not"; either apostrophe): split on the apostrophe,
-- "won't" was the terms "won" and "t" and no negation marker, so "X won't happen" was the same
-- event as "Will X happen?" with sign +1 (QA). Only a text with an apostrophe can match.
CREATE OR REPLACE TEMP MACRO _link_spelled_out(s) AS
  CASE WHEN contains(s, '''') OR contains(s, '’')
       THEN regexp_replace(regexp_replace(regexp_replace(regexp_replace(s,
              '\bwon[''’]t\b', 'will not', 'g'), '\bcan[''’]t\b', 'can not', 'g'), '\bshan[''’]t\b', 'shall not', 'g'),
              'n[''’]t\b', ' not', 'g')
       ELSE s END;

-- ... and "No." before a number read as the abbreviation of number ("No. 1", "No.2"), not the
-- negation marker "no": "debut at No. 1" and "debut at #1" were one event of sign -1 (QA). Only
-- a text holding "no." can match (spelling out contractions neither makes nor breaks one).
CREATE OR REPLACE TEMP MACRO _link_words(s) AS
  CASE WHEN contains(s, 'no.')
       THEN regexp_replace(_link_spelled_out(s), '\bno\.\s*([0-9])', 'number \1', 'g')
       ELSE _link_spelled_out(s) END;

-- One document per question: the tokens of the title and of the description (split once each;
-- the text document is their concatenation). `doc` numbers the questions in question_id order:
-- the tables below pair and group documents by it (an integer is cheaper to hash, sort and
-- compare than a question id) and `x.doc < y.doc` is `a < b`; question ids come back only for
-- the pairs found. (Numbered apart from the texts, which a window over the questions would carry
-- through its sort.)
CREATE OR REPLACE TABLE _link_docs AS
WITH ids AS (
  SELECT question_id, row_number() OVER (ORDER BY question_id) AS doc FROM questions
),
plain AS (
  SELECT question_id, venue, coalesce(category, '') AS block,
         lower(_link_plain_text(coalesce(title, ''))) AS title,
         lower(_link_plain_text(coalesce(description, ''))) AS description
  FROM questions
)
SELECT ids.doc, p.question_id, p.venue, p.block,
       regexp_split_to_array(_link_words(p.title), '[^a-z0-9]+') AS title_tokens,
       regexp_split_to_array(_link_words(p.description), '[^a-z0-9]+') AS description_tokens
FROM plain AS p
JOIN ids USING (question_id);

-- A title is negated when it has an odd number of negation markers.
CREATE OR REPLACE TEMP MACRO _link_negated(title_tokens) AS
  len(list_filter(title_tokens, t -> t IN ('not', 'no'))) % 2 = 1;

-- The date tokens of a title: its numbers and month names (QA: "Starmer out in 2025?" and
-- "Starmer out before July?" matched, as a month was no date token, and showed a 39-point
-- cross-venue gap between two deadlines). A number is every token with a digit ("1st", "$90k",
-- "q2"), an ordinal read as its number ("31st" is 31): only digits alone counted, so "1st round"
-- and "2nd round", "$90k" and "$80k" had the same numbers and were one event (QA).
CREATE OR REPLACE TEMP MACRO _link_numbers(title_tokens) AS
  list_transform(
    list_filter(title_tokens, t -> t <> '' AND (regexp_matches(t, '[0-9]') OR t IN (
      'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
      'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec'))),
    t -> regexp_replace(t, '^([0-9]+)(st|nd|rd|th)$', '\1'));

-- Term counts per document, one row per (document, term) with both fields' counts: a title
-- term counts in both fields.
CREATE OR REPLACE TABLE _link_terms AS
WITH t AS (
  SELECT doc, unnest(title_tokens) AS term, 1 AS in_title FROM _link_docs
  UNION ALL
  SELECT doc, unnest(description_tokens) AS term, 0 AS in_title FROM _link_docs
)
SELECT doc, term, sum(in_title) AS tf_title, count(*) AS tf_text
FROM t
WHERE (length(term) >= 2 OR (length(term) = 1 AND term BETWEEN '0' AND '9'))
  AND term NOT IN (SELECT term FROM _link_stopwords)
GROUP BY doc, term;

-- Unit-length TF-IDF vectors (terms of weight 0 and empty documents dropped): one row per
-- (document, field, term), the title field holding the terms with tf_title > 0. Both fields'
-- document frequencies come from one aggregate and one join, and a term of weight 0 in both (in
-- every document) is dropped before the rows are split by field (on the scoring bench's
-- synthetic corpus, whose titles share one template, those are most of the rows).
CREATE OR REPLACE TABLE _link_vectors AS
WITH n AS (SELECT count(*)::DOUBLE AS n FROM _link_docs),
df AS (
  SELECT term, count(*) FILTER (WHERE tf_title > 0)::DOUBLE AS df_title, count(*)::DOUBLE AS df_text
  FROM _link_terms GROUP BY term
),
w AS (
  SELECT t.doc, f.field, t.term,
         CASE f.field WHEN 'title' THEN t.tf_title::DOUBLE * ln(n.n / df.df_title)
                      ELSE t.tf_text::DOUBLE * ln(n.n / df.df_text) END AS w
  FROM _link_terms AS t
  JOIN df USING (term)
  CROSS JOIN n
  -- the terms with a weight in either field (df < N), then one row per field
  JOIN (VALUES ('title'), ('text')) AS f(field)
    ON f.field = 'text' OR t.tf_title > 0
  WHERE df.df_text < n.n OR (t.tf_title > 0 AND df.df_title < n.n)
)
SELECT w.doc, d.question_id, d.block, w.field, w.term,
       w.w / sqrt(sum(w.w * w.w) OVER (PARTITION BY w.doc, w.field)) AS w
FROM w
JOIN _link_docs AS d USING (doc)
WHERE w.w > 0;

-- Blocking: the terms a pair may be found through (at most max_term_df documents of the block);
-- the others are the block's common terms.
CREATE OR REPLACE TABLE _link_blocked AS
SELECT doc, block, field, term, w,
       count(*) OVER (PARTITION BY field, block, term) <= (SELECT max_term_df FROM _structure_params) AS rare
FROM _link_vectors;

-- Per document, the norm of its common terms' part of the vector: by Cauchy-Schwarz, what the
-- common terms can add to a dot product is at most the product of the two documents' norms.
CREATE OR REPLACE TABLE _link_common_norm AS
SELECT doc, field, sqrt(sum(w * w)) AS norm
FROM _link_blocked
WHERE NOT rare
GROUP BY doc, field;

-- Candidate pairs (documents a < b) with the dot product over their shared rare terms; kept only
-- when that plus the most their common terms could add reaches the field's lowest threshold (no
-- pair that could reach a threshold is lost).
CREATE OR REPLACE TABLE _link_candidates AS
WITH partial AS (
  SELECT x.field, x.doc AS a, y.doc AS b, sum(x.w * y.w) AS dot_rare
  FROM _link_blocked AS x
  JOIN _link_blocked AS y
    ON y.field = x.field AND y.block = x.block AND y.term = x.term AND x.doc < y.doc
  WHERE x.rare AND y.rare
  GROUP BY x.field, x.doc, y.doc
)
SELECT p.field, p.a, p.b, p.dot_rare
FROM partial AS p
CROSS JOIN _structure_params AS sp
LEFT JOIN _link_common_norm AS na ON na.doc = p.a AND na.field = p.field
LEFT JOIN _link_common_norm AS nb ON nb.doc = p.b AND nb.field = p.field
WHERE p.dot_rare + coalesce(na.norm, 0) * coalesce(nb.norm, 0)
      >= CASE p.field WHEN 'text' THEN least(sp.similar_threshold, sp.cluster_threshold) ELSE sp.same_event_threshold END;

-- The full cosine of every candidate pair (documents a < b): its rare part plus its shared
-- common terms.
CREATE OR REPLACE TABLE _link_cosine AS
SELECT c.field, c.a, c.b,
       least(c.dot_rare + coalesce(sum(ca.w * cb.w), 0), 1.0) AS cosine
FROM _link_candidates AS c
LEFT JOIN _link_blocked AS ca ON ca.field = c.field AND ca.doc = c.a AND NOT ca.rare
LEFT JOIN _link_blocked AS cb ON cb.field = c.field AND cb.doc = c.b AND cb.term = ca.term AND NOT cb.rare
GROUP BY c.field, c.a, c.b, c.dot_rare;

CREATE OR REPLACE TABLE _links_computed AS
WITH found AS (
  -- The pairs at or above their kind's threshold (a candidate may be one only for clustering).
  SELECT CASE c.field WHEN 'text' THEN 'similar' ELSE 'same_event' END AS kind, c.a, c.b, c.cosine
  FROM _link_cosine AS c
  CROSS JOIN _structure_params AS sp
  WHERE c.cosine >= CASE c.field WHEN 'text' THEN sp.similar_threshold ELSE sp.same_event_threshold END
),
titles AS (
  -- The questions of those pairs: id, venue, negation and date tokens of the title.
  SELECT d.doc, d.question_id, d.venue, _link_negated(d.title_tokens) AS negated, _link_numbers(d.title_tokens) AS numbers
  FROM _link_docs AS d
  WHERE d.doc IN (SELECT a FROM found UNION SELECT b FROM found)
),
signed AS (
  -- Both kinds' sign: -1 when exactly one of the two titles is negated.
  SELECT f.kind, ta.question_id AS a, tb.question_id AS b, f.cosine,
         CASE WHEN ta.negated <> tb.negated THEN -1 ELSE 1 END AS sign,
         ta.venue AS a_venue, tb.venue AS b_venue, ta.numbers AS a_numbers, tb.numbers AS b_numbers
  FROM found AS f
  JOIN titles AS ta ON ta.doc = f.a
  JOIN titles AS tb ON tb.doc = f.b
)
SELECT s.a, s.b, s.kind, s.sign, s.cosine AS strength
FROM signed AS s
WHERE s.kind = 'similar'
   OR (s.a_venue IS DISTINCT FROM s.b_venue
       AND (list_has_all(s.a_numbers, s.b_numbers) OR list_has_all(s.b_numbers, s.a_numbers)));

-- Curated links between questions of this snapshot; symmetric kinds ordered a < b.
CREATE OR REPLACE TABLE _links_curated AS
SELECT DISTINCT ON (a, b, kind) a, b, kind, sign, strength
FROM (
  SELECT CASE WHEN s.kind = 'implies' OR s.a < s.b THEN s.a ELSE s.b END AS a,
         CASE WHEN s.kind = 'implies' OR s.a < s.b THEN s.b ELSE s.a END AS b,
         s.kind, coalesce(s.sign, 1)::INTEGER AS sign, coalesce(s.strength, 1.0)::DOUBLE AS strength
  FROM _structure_links AS s
  WHERE s.a IN (SELECT question_id FROM questions) AND s.b IN (SELECT question_id FROM questions)
)
ORDER BY a, b, kind;

-- Published (the contract other stages read: a, b, kind, sign, strength, origin).
CREATE OR REPLACE TABLE question_links AS
SELECT a::VARCHAR AS a, b::VARCHAR AS b, kind::VARCHAR AS kind, sign::INTEGER AS sign,
       strength::DOUBLE AS strength, origin::VARCHAR AS origin
FROM (
  SELECT a, b, kind, sign, strength, 'curated' AS origin FROM _links_curated
  UNION ALL
  SELECT c.a, c.b, c.kind, c.sign, c.strength, 'computed' AS origin
  FROM _links_computed AS c
  WHERE NOT EXISTS (SELECT 1 FROM _links_curated AS k WHERE k.a = c.a AND k.b = c.b AND k.kind = c.kind)
)
ORDER BY a, b, kind;

-- Published: for each question, the other venues' prices of the same event (both directions of
-- every same_event link). implied_probability is the other market's price read as this
-- question's YES (1 - p for a negated pair); gap = this question's market - implied_probability.
CREATE OR REPLACE TABLE same_event_prices AS
WITH pairs AS (
  SELECT a AS question_id, b AS other_question_id, sign, strength, origin FROM question_links WHERE kind = 'same_event'
  UNION ALL
  SELECT b, a, sign, strength, origin FROM question_links WHERE kind = 'same_event'
)
SELECT p.question_id, p.other_question_id, o.venue AS other_venue, o.title AS other_title, o.url AS other_url,
       p.sign, p.strength, p.origin,
       o.latest_market_probability AS other_market_probability,
       o.latest_market_observed_at AS other_market_observed_at,
       CASE WHEN p.sign = -1 THEN 1 - o.latest_market_probability ELSE o.latest_market_probability END AS implied_probability,
       q.latest_market_probability
         - CASE WHEN p.sign = -1 THEN 1 - o.latest_market_probability ELSE o.latest_market_probability END AS gap
FROM pairs AS p
JOIN questions AS q ON q.question_id = p.question_id
JOIN questions AS o ON o.question_id = p.other_question_id
ORDER BY p.question_id, p.other_question_id;
