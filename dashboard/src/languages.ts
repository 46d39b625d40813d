/**
 * Reasoning languages as the API and the dashboard match them: a code in any case, or another code
 * of the same language (`iw` is `he`, `eng` is `en`), names that language. The one definition,
 * shared with the server as first-reads.ts is (plain code, compiled by both tsconfigs): QUORUM_LANGS,
 * the probability endpoint's `langs` and the language feeds read codes by it
 * (pipeline/models/prompts.ts re-exports languageKey; api/routes/prediction-params.ts matchLang).
 */

/**
 * The form two codes of one language share: BCP 47 canonical (Intl.getCanonicalLocales: `eng` is
 * `en`, `iw` is `he`, `sh` is `sr-Latn`), lower case. Two codes of a list with the same key are the
 * same language listed twice (QA: `en,eng` had every model asked for a "translation" into the
 * language it had just written in, and the feeds split the language in two).
 */
export function languageKey(code: string): string {
  try {
    // Lower case first: ICU applies two aliases only to a code not in lower case (`BH` is `bho`, `bh`
    // stays `bh`; `TW` is `ak`), so `bh` and `BH` were two languages (a property test's find)
    return Intl.getCanonicalLocales(code.toLowerCase())[0]!.toLowerCase();
  } catch {
    return code.toLowerCase();
  }
}

/**
 * The code of `codes` that `asked` names, as the API's feeds match a language: the same code in any
 * case first, else another code of that language; undefined when none does.
 */
export function matchLanguage(codes: readonly string[], asked: string): string | undefined {
  return codes.find((c) => c.toLowerCase() === asked.toLowerCase()) ?? codes.find((c) => languageKey(c) === languageKey(asked));
}
