/**
 * Reasoning languages as the API matches them: a code in any case, or another code of the same
 * language (`iw` is `he`, `eng` is `en`), names that language. The API's rule is languageKey
 * (pipeline/models/prompts.ts: BCP 47 canonical form, lower case); this is its copy for the
 * browser, which has the same Intl.getCanonicalLocales (the dashboard bundles nothing of the
 * pipeline's).
 */

/** The form every code of one language shares. */
export function languageKey(code: string): string {
  try {
    return Intl.getCanonicalLocales(code)[0]!.toLowerCase();
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
