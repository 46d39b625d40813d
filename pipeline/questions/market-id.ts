/**
 * A venue's id of a market as a question id carries it (`<venue>:<market id>`): the one grammar
 * the API's paths and filters take (api/routes/prediction-params.ts), so every id the import and
 * the sync store can be asked for. Letters, digits, `_`, `.` and `-`, 1 to 200 characters: the
 * ids of every venue and of ForecastBench are (numbers, hex hashes, slugs, tickers such as
 * `KXHIGHNY-25NOV28-B47.5`), and the API's list cursors carry question ids within 1,024
 * characters (api/http/cursor.ts). A 601-character id was imported and every list that reached it
 * issued a next_cursor it then refused; an id with a space or a `/` was imported and no path or
 * `question_id` filter could name it (QA).
 */
export const MAX_MARKET_ID_LENGTH = 200;
export const MARKET_ID_CHARS = 'A-Za-z0-9_.-';
export const MARKET_ID = new RegExp(`^[${MARKET_ID_CHARS}]{1,${MAX_MARKET_ID_LENGTH}}$`);

/**
 * Why `id` cannot be a question's market id, or null when it can. Fixed texts, so that a report
 * counts every such market under one reason.
 */
export function marketIdProblem(id: string): string | null {
  if (id.length === 0) return 'market id is empty';
  if (id.length > MAX_MARKET_ID_LENGTH) return `market id over ${MAX_MARKET_ID_LENGTH} characters`;
  if (/\p{Cc}/u.test(id)) return 'market id has a control character';
  if (!MARKET_ID.test(id)) return "market id has a character other than letters, digits, '_', '.' and '-'";
  return null;
}
