-- How many active predictions have reasoning in $lang (all pages together).
-- Parameters: $lang VARCHAR (any case: a language two runs stored in two cases, pt-BR and pt-br, is one), $category VARCHAR|NULL, $venue VARCHAR|NULL.
SELECT count(*) AS total
FROM active_predictions
WHERE list_contains(list_transform(langs, l -> lower(l)), lower($lang))
  AND ($category IS NULL OR category = $category)
  AND ($venue IS NULL OR venue = $venue);
