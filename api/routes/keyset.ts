/**
 * Keyset cursors of the prediction feeds (edges, predictions by language, events by language):
 * `{"v":1,"k":<kind>,"a":[...the last row's key...]}`, bound to their endpoint by `kind`. The
 * codec is THE cursor parser of api/http/cursor.ts (re-exported here for the route files).
 */
export { bigintKey, cursorQuestionId, decodeKeyset, encodeKeyset, int64String } from '../http/cursor.ts';
