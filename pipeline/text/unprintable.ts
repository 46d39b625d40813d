/**
 * What a name or note an operator's terminal prints may not hold: C0/C1 control characters and the
 * bidirectional embeddings, overrides and isolates. `quorum keys list` and `quorum webhooks list`
 * print them (QA: a newline split a row over two lines, an ESC sequence recoloured or rewrote the
 * terminal, U+202E showed a name reversed; JSON output escapes C0 but not C1 or the overrides).
 */
export const UNPRINTABLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;
