/**
 * Deterministic source slugs (issue 11): the ASCII-folded kebab-case of a source's name.
 *
 * Folding: Unicode NFKD with combining marks removed ("é" → "e"), then the letters NFKD does not
 * decompose ("Ø" → "O", "ß" → "ss", "Æ" → "AE", ...); anything else that is not [a-z0-9] becomes a
 * separator, runs of separators collapse to one "-", none at either end ("Øptimus Analytics" →
 * "optimus-analytics", "Mason-Dixon Polling & Strategy" → "mason-dixon-polling-strategy").
 *
 * Identity: a name is compared in Unicode NFC (`sourceName`), so the same text composed ("é",
 * U+00E9) or decomposed ("e" + U+0301) is one source, stored under its NFC spelling.
 *
 * Collisions (two different names folding to the same slug): a name keeps the slug it was given
 * before (the warehouse's `sources` rows are read first, so re-importing never renames a source);
 * new names are handled in code-point order of the (NFC) name, the first taking the bare slug and
 * the next ones `-2`, `-3`, ... (the first free suffix). The same inputs always give the same slugs.
 *
 * Reserved: Quorum's own sources are not stored in `sources` but made by a view over the scored
 * forecasts (sql/derive/90_claims.sql): `ai-<model>` for each model, `quorum-consensus`, and each
 * venue's name. An imported source given one of those slugs would be merged into that source's
 * track record (its claims counted with the venue's, its name and kind shown for it), so a new
 * name never gets one: a venue's or the consensus's slug takes the next free `-N`
 * (`Polymarket` → `polymarket-2`), and a slug in the models' namespace `ai-` is moved out of it
 * (`AI Impacts` → `source-ai-impacts`): a suffix would not do there, as a model may be called
 * `impacts-2`, and models added later must not find their slug taken.
 */

/** The sources already stored, as slug.ts's assignSlugs takes them. */
export interface StoredSources {
  /** name → slug of the stored sources this import may add claims to (the first stored slug of a name). */
  known: Map<string, string>;
  /** Every stored slug, whatever made it (no new source may take one). */
  taken: Set<string>;
  /** The venues' slugs (their names): Quorum's own sources, made by a view, never stored. */
  venues: Set<string>;
}

/** Letters NFKD leaves alone, folded by hand. */
const EXTRA_FOLDS: Record<string, string> = {
  Ø: 'O', ø: 'o', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', ß: 'ss', Þ: 'TH', þ: 'th', Ð: 'D', ð: 'd',
  Đ: 'D', đ: 'd', Ł: 'L', ł: 'l', Ħ: 'H', ħ: 'h', ı: 'i', Ŋ: 'NG', ŋ: 'ng', ſ: 's',
};

/** The ASCII fold of `text` (letters and digits kept, accents dropped, other characters as they are). */
export function foldAscii(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\x00-\x7f]/g, (c) => EXTRA_FOLDS[c] ?? c);
}

/**
 * The longest bare slug. The API takes slugs of at most 200 characters (`SLUG` in
 * api/routes/claims.ts and track-records.ts): a longer one made the source's track record and
 * claims filter a 400 (QA). 180 leaves room for `source-` and a `-N` suffix.
 */
export const MAX_SLUG_BASE = 180;

/**
 * The bare slug of a name; "source" when nothing of it survives folding (e.g. a name in CJK). At
 * most MAX_SLUG_BASE characters (cut at that length, then at a trailing `-`).
 */
export function slugify(name: string): string {
  const s = foldAscii(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SLUG_BASE)
    .replace(/-+$/, '');
  return s === '' ? 'source' : s;
}

/** The slug prefix of Quorum's AI models as sources (`'ai-' || model`, sql/derive/90_claims.sql). */
export const MODEL_SLUG_PREFIX = 'ai-';
/**
 * The source slug of Quorum's AI model `id` as a track record (sql/derive/90_claims.sql:
 * `'ai-' || _claim_slug(model)`, lower case, each run of other characters one `-`, none at the ends).
 */
export function modelSourceSlug(id: string): string {
  return MODEL_SLUG_PREFIX + id.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}
/** The prefix that moves a name out of the models' namespace (`ai-impacts` → `source-ai-impacts`). */
const OUT_OF_MODELS = 'source-';
/** Slugs of Quorum's own sources besides the models and venues: the consensus (90_claims.sql). */
export const QUORUM_SLUGS: readonly string[] = ['quorum-consensus'];

/**
 * True when `slug` is one of Quorum's own sources' slugs, or one a model may get later: the
 * consensus, a name in `venues` (the venues' slugs are their names), anything in `ai-`.
 */
export function isReservedSlug(slug: string, venues: ReadonlySet<string>): boolean {
  return slug.startsWith(MODEL_SLUG_PREFIX) || QUORUM_SLUGS.includes(slug) || venues.has(slug);
}

/**
 * The bare slug of a new (imported) source: `slugify`, moved out of the models' namespace (no
 * suffix makes an `ai-` slug safe from a model's: `ai-gemini-2` is the model `gemini-2`).
 */
export function newSourceSlug(name: string): string {
  const s = slugify(name);
  return s.startsWith(MODEL_SLUG_PREFIX) ? `${OUT_OF_MODELS}${s}` : s;
}

/**
 * A source's name as it is stored and compared: Unicode NFC, so that the composed and decomposed
 * spellings of the same text (files from different systems) are one source.
 */
export function sourceName(name: string): string {
  return name.normalize('NFC');
}

/**
 * Code-point order of two strings (negative, 0, positive). JavaScript's `<` compares UTF-16 code
 * units, which puts an astral character (a surrogate pair, 0xD800-0xDFFF) before U+E000-U+FFFF:
 * "Polls 😀" (U+1F600) before "Polls ！" (U+FF01), against the documented code-point order (QA).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    // a surrogate here starts (or, after an equal high surrogate, ends) a code point above U+FFFF
    if (sx !== sy) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Slugs for `names` (as the files spell them; the result is keyed by that spelling): a name already
 * in `known` (name → slug, from the warehouse) keeps its slug, first by its exact spelling (a
 * source stored before names were normalized keeps receiving its claims), then by its NFC form;
 * the others get their bare slug (`newSourceSlug`) or the first free `-N` suffix, one per NFC
 * name, in code-point order of the NFC names, never one in `taken` (every slug already stored,
 * whatever its name) nor a reserved one (`isReservedSlug`; `venues`: the venues' slugs).
 */
export function assignSlugs(
  names: Iterable<string>,
  known: ReadonlyMap<string, string>,
  taken: ReadonlySet<string>,
  venues: ReadonlySet<string> = new Set(),
): Map<string, string> {
  const used = new Set(taken);
  for (const slug of known.values()) used.add(slug);
  // Stored names by NFC form (the first stored slug of a form wins, like `known` itself).
  const knownNfc = new Map<string, string>();
  for (const [name, slug] of known) if (!knownNfc.has(sourceName(name))) knownNfc.set(sourceName(name), slug);
  const out = new Map<string, string>();
  const byForm = new Map<string, string>(); // NFC name → its slug in this call
  const spellings = [...new Set(names)].map((name) => ({ name, form: sourceName(name) }));
  spellings.sort((a, b) => compareCodePoints(a.form, b.form) || compareCodePoints(a.name, b.name));
  for (const { name, form } of spellings) {
    const old = known.get(name) ?? knownNfc.get(form) ?? byForm.get(form);
    if (old !== undefined) {
      out.set(name, old);
      continue;
    }
    const base = newSourceSlug(form);
    let slug = base;
    for (let n = 2; used.has(slug) || isReservedSlug(slug, venues); n++) slug = `${base}-${n}`;
    used.add(slug);
    byForm.set(form, slug);
    out.set(name, slug);
  }
  return out;
}
