/**
 * A title with nothing to read: empty once trimmed, or only format and control characters (a
 * zero-width space). Venues take any non-empty string (Manifold's create-market schema does not
 * trim), and neither such a market nor such a question-file entry would be a question with text.
 */
export const BLANK_TITLE = /^[\s\p{Cc}\p{Cf}]*$/u;
