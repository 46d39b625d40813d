/**
 * A literal-prefix index over the taxonomy's regex patterns: where in a text each pattern can
 * possibly match.
 *
 * Every match of a rule is whole-word (classify.ts), so a pattern that starts with a word
 * character can only match at a word start. Its literal beginning is read off the source as a
 * small set of prefixes: "the Moon" → "the moon", "S&P 500" → "s&p 500", "rates?" → "rate",
 * "re-?elected" → "re-elected", "reelected", "(?:Pacific|Atlantic) Division" → "pacific
 * division", "atlantic division", "\d+ ?bps" → "0" … "9". The prefixes form a trie over
 * case-folded printable ASCII; walking it from each word start of a question yields the
 * (pattern, position) pairs worth trying, and classify.ts runs that pattern's sticky regex only
 * there. A rule with a pattern whose start cannot be read (it may begin with a non-word
 * character, or optionally) scans whole texts with its regex instead. The index only ever
 * over-includes: the regex still decides every match, so classification is exactly what running
 * every rule everywhere gives.
 *
 * Case folding: rules are compiled with the `u` flag, where case-insensitive matching uses Unicode
 * simple case folding. The only characters that fold to an ASCII letter besides A–Z are U+212A
 * KELVIN SIGN (→ k) and U+017F LATIN SMALL LETTER LONG S (→ s), and no non-ASCII character folds
 * to ASCII punctuation; the trie walk folds exactly these (a test checks `asciiFold` against the
 * regex engine for every code point). Case-sensitive rules are walked folded too: more
 * candidates, same matches.
 */

export interface PrefixIndex {
  /** Trie transitions: next[node * alphabet + symbolOf[char]], 0 = none. */
  next: Int32Array;
  /** Symbol of each UTF-16 code unit (folded), or -1 when no prefix contains it. */
  symbolOf: Int8Array;
  alphabet: number;
  /**
   * Patterns (by their position in the rules' patterns, flattened) with a prefix ending at each
   * node: hits[hitsFrom[node] .. hitsFrom[node + 1]).
   */
  hitsFrom: Int32Array;
  hits: Int32Array;
  /** The rule of each pattern (flattened order). */
  ruleOf: Int32Array;
  /** Rules with a pattern whose start is not a literal prefix: they scan whole texts. */
  always: number[];
}

/** At most this many prefixes are read per alternative; longer expansions stop early. */
const MAX_PREFIXES = 32;
const DIGITS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];
const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
/** Regex syntax characters (outside a class). */
const SYNTAX = new Set([...'^$\\.*+?()[]{}|']);
const PRINTABLE_ASCII = /^[\x20-\x7e]$/;
const ASCII_ALNUM = /^[A-Za-z0-9]$/;

/** The folded character a UTF-16 code unit is compared as (case-insensitive `u` matching), or null. */
function foldUnit(c: number): string | null {
  if (c === 0x212a) return 'k'; // KELVIN SIGN
  if (c === 0x17f) return 's'; // LATIN SMALL LETTER LONG S
  if (c < 0x20 || c > 0x7e) return null;
  return String.fromCharCode(c).toLowerCase();
}

/** Whether each ASCII character is a word character ([A-Za-z0-9_]). */
const ASCII_WORD_CHAR = new Uint8Array(128).map((_, c) => (WORD_CHAR.test(String.fromCharCode(c)) ? 1 : 0));
const nonAsciiWord = new Map<number, boolean>();

/** Whether a code point is a word character as classify.ts's boundaries see it ([\p{L}\p{N}_]). */
function isWordCodePoint(cp: number): boolean {
  if (cp < 128) return ASCII_WORD_CHAR[cp] === 1;
  let word = nonAsciiWord.get(cp);
  if (word === undefined) nonAsciiWord.set(cp, (word = WORD_CHAR.test(String.fromCodePoint(cp))));
  return word;
}

/**
 * The printable ASCII character a code point matches in an `iu` regex, lower-cased, or null.
 * This is the folding the trie walk uses; a test checks it against the regex engine for every
 * code point.
 */
export function asciiFold(cp: number): string | null {
  return cp < 0x10000 ? foldUnit(cp) : null;
}

/**
 * Walks a regex source from `from`, calling `at(i, c, depth)` for every syntax character outside
 * escapes and character classes (`depth`: group nesting before it); stops when `at` returns true
 * and gives that index, else -1.
 */
function walkSyntax(src: string, from: number, at: (i: number, c: string, depth: number) => boolean): number {
  let depth = 0;
  let inClass = false;
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else {
      if (at(i, c, depth)) return i;
      if (c === '(') depth++;
      else if (c === ')') depth--;
    }
  }
  return -1;
}

/** Index just past the `)` closing the group opened at `open`, or -1. */
function groupEnd(src: string, open: number): number {
  const close = walkSyntax(src, open, (_i, c, depth) => c === ')' && depth === 1);
  return close < 0 ? -1 : close + 1;
}

/** Splits a regex source at its top-level `|`. */
function topLevelAlternatives(src: string): string[] {
  const out: string[] = [];
  let start = 0;
  walkSyntax(src, 0, (i, c, depth) => {
    if (c === '|' && depth === 0) {
      out.push(src.slice(start, i));
      start = i + 1;
    }
    return false;
  });
  out.push(src.slice(start));
  return out;
}

/**
 * What the regex item at `i` matches: `options` are the strings it matches (`complete`) or,
 * when it can match more than a finite set of literals, the prefixes every match of it starts
 * with (not complete). null: nothing literal can be read.
 */
interface Item {
  options: string[];
  complete: boolean;
  end: number;
}

function readItem(src: string, i: number): Item | null {
  const c = src[i]!;
  if (c === '\\') {
    const n = src[i + 1] ?? '';
    if (n === 'd') return { options: DIGITS, complete: true, end: i + 2 };
    // An escaped ASCII punctuation character is that character; other escapes are classes.
    if (PRINTABLE_ASCII.test(n) && !ASCII_ALNUM.test(n)) return { options: [n], complete: true, end: i + 2 };
    return null;
  }
  if (c === '[') {
    const close = src.indexOf(']', i + 1);
    const members = close > i + 1 ? src.slice(i + 1, close) : '';
    if (!/^[A-Za-z0-9 ]+$/.test(members)) return null; // ranges, negation, escapes: not read
    return { options: [...new Set(members.toLowerCase())], complete: true, end: close + 1 };
  }
  if (c === '(') {
    const plain = !src.startsWith('(?', i);
    if (!plain && !src.startsWith('(?:', i)) return null; // lookarounds, named groups
    const end = groupEnd(src, i);
    if (end < 0) return null;
    const inner = alternativesPrefixes(src.slice(i + (plain ? 1 : 3), end - 1));
    return inner && { ...inner, end };
  }
  if (SYNTAX.has(c) || !PRINTABLE_ASCII.test(c)) return null;
  return { options: [c.toLowerCase()], complete: true, end: i + 1 };
}

/** Every concatenation of a prefix in `a` with an option in `b`; null when there would be too many. */
function cross(a: readonly string[], b: readonly string[]): string[] | null {
  if (a.length * b.length > MAX_PREFIXES) return null;
  return [...new Set(a.flatMap((x) => b.map((y) => x + y)))];
}

/** Prefixes of one alternative (a sequence of items), read until something not literal. */
function sequencePrefixes(src: string): { options: string[]; complete: boolean } {
  let acc = [''];
  for (let i = 0; i < src.length; ) {
    const item = readItem(src, i);
    if (item === null) return { options: acc, complete: false };
    let { options, complete, end } = item;
    const quantifier = src[end];
    if (quantifier === '?') {
      options = [...options, ''];
      end += src[end + 1] === '?' ? 2 : 1;
    } else if (quantifier === '+') {
      // At least once: its first occurrence is a prefix; what follows is not read.
      return { options: cross(acc, options) ?? acc, complete: false };
    } else if (quantifier === '*' || quantifier === '{') {
      return { options: acc, complete: false };
    }
    const next = cross(acc, options);
    if (next === null) return { options: acc, complete: false };
    acc = next;
    if (!complete) return { options: acc, complete: false };
    i = end;
  }
  return { options: acc, complete: true };
}

/** Prefixes of a `|`-separated source. */
function alternativesPrefixes(src: string): { options: string[]; complete: boolean } | null {
  const options: string[] = [];
  let complete = true;
  for (const alt of topLevelAlternatives(src)) {
    const p = sequencePrefixes(alt);
    options.push(...p.options);
    complete &&= p.complete;
  }
  return { options: [...new Set(options)], complete };
}

/**
 * Literal prefixes (lower case) every match of `source` starts with, at least one of them at a
 * word start; null if none can be read (a match could start elsewhere). A prefix that extends
 * another of the same pattern is dropped: the shorter one already places every match.
 */
export function patternPrefixes(source: string): string[] | null {
  const read = alternativesPrefixes(source);
  if (read === null || read.options.some((p) => p === '' || !ASCII_ALNUM.test(p[0]!))) return null;
  const sorted = [...read.options].sort((a, b) => a.length - b.length);
  return sorted.filter((p, k) => !sorted.slice(0, k).some((q) => p.startsWith(q)));
}

/**
 * Builds the index for rules given as lists of pattern sources (rule i = patterns[i]). Patterns
 * are numbered in flattened order (rule 0's, then rule 1's, ...).
 */
export function buildPrefixIndex(patterns: readonly (readonly string[])[]): PrefixIndex {
  const always: number[] = [];
  const ruleOf: number[] = [];
  const indexed: { prefix: string; pattern: number }[] = [];
  patterns.forEach((sources, rule) => {
    const first = ruleOf.length;
    for (let j = 0; j < sources.length; j++) ruleOf.push(rule);
    const prefixes = sources.map(patternPrefixes);
    // One pattern without a readable start: the rule scans whole texts, so none of its patterns is indexed.
    if (prefixes.some((p) => p === null)) always.push(rule);
    else prefixes.forEach((ps, j) => ps!.forEach((prefix) => indexed.push({ prefix, pattern: first + j })));
  });

  // The alphabet: the characters the prefixes use; text characters folding to one share its symbol.
  const symbolOf = new Int8Array(0x10000).fill(-1);
  const chars = [...new Set(indexed.flatMap((e) => [...e.prefix]))].sort();
  if (chars.length > 127) throw new Error('taxonomy prefixes use more than 127 distinct characters');
  const symbolOfChar = new Map(chars.map((ch, k) => [ch, k]));
  for (let c = 0; c < 0x10000; c++) {
    const folded = foldUnit(c);
    const symbol = folded === null ? undefined : symbolOfChar.get(folded);
    if (symbol !== undefined) symbolOf[c] = symbol;
  }
  const alphabet = Math.max(1, chars.length);

  const next: number[] = new Array<number>(alphabet).fill(0);
  const patternsAt: number[][] = [[]];
  for (const { prefix, pattern } of indexed) {
    let node = 0;
    for (const ch of prefix) {
      const slot = node * alphabet + symbolOfChar.get(ch)!;
      if (next[slot] === 0) {
        next[slot] = patternsAt.length;
        patternsAt.push([]);
        for (let k = 0; k < alphabet; k++) next.push(0);
      }
      node = next[slot]!;
    }
    if (!patternsAt[node]!.includes(pattern)) patternsAt[node]!.push(pattern);
  }
  const hitsFrom = new Int32Array(patternsAt.length + 1);
  patternsAt.forEach((ps, node) => (hitsFrom[node + 1] = hitsFrom[node]! + ps.length));
  const hits = Int32Array.from(patternsAt.flat());
  return { next: Int32Array.from(next), symbolOf, alphabet, hitsFrom, hits, ruleOf: Int32Array.from(ruleOf), always };
}

/**
 * Writes every (pattern, start) pair where one of the pattern's prefixes begins at a word start
 * of `text` into `out` (pattern at even, start at odd positions) and returns how many numbers it
 * wrote. A word start is a word character not preceded by one, code point by code point as the
 * regexes see them. `out` is reused across calls (no allocation per question).
 */
export function collectCandidates(index: PrefixIndex, text: string, out: number[]): number {
  const { next, hitsFrom, hits, symbolOf, alphabet } = index;
  const n = text.length;
  let written = 0;
  let previousIsWord = false;
  for (let i = 0; i < n; ) {
    const c = text.charCodeAt(i);
    let width = 1;
    let isWord: boolean;
    if (c < 128) isWord = ASCII_WORD_CHAR[c] === 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      width = 2;
      isWord = isWordCodePoint(text.codePointAt(i)!);
    } else isWord = isWordCodePoint(c);
    if (isWord && !previousIsWord) {
      // Walk the trie along the folded text; every node passed ends some patterns' prefixes.
      let node = 0;
      for (let j = i; j < n; j++) {
        const symbol = symbolOf[text.charCodeAt(j)]!;
        if (symbol < 0) break;
        node = next[node * alphabet + symbol]!;
        if (node === 0) break;
        for (let h = hitsFrom[node]!, end = hitsFrom[node + 1]!; h < end; h++) {
          out[written++] = hits[h]!;
          out[written++] = i;
        }
      }
    }
    previousIsWord = isWord;
    i += width;
  }
  return written;
}
