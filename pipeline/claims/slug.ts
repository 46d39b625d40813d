/**
 * Deterministic source slugs (issue 11): the ASCII-folded kebab-case of a source's name.
 *
 * Folding: Unicode NFKD with combining marks removed ("é" → "e"), then the letters NFKD does not
 * decompose ("Ø" → "O", "ß" → "ss", "Æ" → "AE", ...); anything else that is not [a-z0-9] becomes a
 * separator, runs of separators collapse to one "-", none at either end ("Øptimus Analytics" →
 * "optimus-analytics", "Mason-Dixon Polling & Strategy" → "mason-dixon-polling-strategy").
 *
 * Collisions (two different names folding to the same slug): a name keeps the slug it was given
 * before (the warehouse's `sources` rows are read first, so re-importing never renames a source);
 * new names are handled in code-point order of the name, the first taking the bare slug and the
 * next ones `-2`, `-3`, ... (the first free suffix). The same inputs always give the same slugs.
 */

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

/** The bare slug of a name; "source" when nothing of it survives folding (e.g. a name in CJK). */
export function slugify(name: string): string {
  const s = foldAscii(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s === '' ? 'source' : s;
}

/**
 * Slugs for `names`: a name already in `known` (name → slug, from the warehouse) keeps its slug;
 * the others get their bare slug or the first free `-N` suffix, in code-point order of the names,
 * never one in `taken` (every slug already stored, whatever its name).
 */
export function assignSlugs(
  names: Iterable<string>,
  known: ReadonlyMap<string, string>,
  taken: ReadonlySet<string>,
): Map<string, string> {
  const used = new Set(taken);
  for (const slug of known.values()) used.add(slug);
  const out = new Map<string, string>();
  const fresh = [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of fresh) {
    const old = known.get(name);
    if (old !== undefined) {
      out.set(name, old);
      continue;
    }
    const base = slugify(name);
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
    used.add(slug);
    out.set(name, slug);
  }
  return out;
}
