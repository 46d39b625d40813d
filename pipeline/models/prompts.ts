/**
 * Forecast prompts: the three information modes as versioned template files
 * (`data/prompts/<mode>.v<N>.txt`, the highest N is used; see data/prompts/README.md) and a tiny
 * `{{placeholder}}` renderer. The template's version (e.g. "informed.v2") is part of the hashed
 * text, so `prompt_hash` identifies the template version as well as the rendered prompt.
 *
 * Languages: the first language of `langs` is the reasoning language; any further ones are asked
 * for in the same call, as `translations: {<code>: {reasoning, key_factors}}` (one call, one
 * probability, the reasoning in every configured language; see pipeline/forecast/README.md).
 *
 * The ladder (DESIGN §6): blind = question, resolution criteria and dates; informed adds the
 * question's background, the market probability, its recent history, volume and liquidity;
 * augmented adds retrieved evidence numbered [1], [2]… for citation. The prompt is rendered from
 * what the task carries: as-of filtering (no price or evidence from after the run's as-of time) is
 * the caller's job (DESIGN §5).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { languageKey } from '../../dashboard/src/languages.ts';
import type { Mode } from '../warehouse/tables.ts';

export interface TaskQuestion {
  question_id: string;
  title: string;
  description: string | null;
  resolution_criteria: string | null;
  url: string | null;
  created_at: Date | null;
  close_time: Date | null;
  category: string | null;
  domain: string | null;
}

export interface TaskMarket {
  /** Latest market probability of YES at or before the run's as-of time. */
  probability: number;
  observed_at: Date;
  volume: number | null;
  liquidity: number | null;
  /** Recent price history (any order; the prompt shows the last point per day, up to 10 days). */
  history: { observed_at: Date; probability: number }[];
}

export interface TaskEvidence {
  evidence_id: string;
  title: string | null;
  url: string | null;
  published_at: Date | null;
  snippet: string | null;
}

/**
 * A scenario's conditional question (issue 13): the earlier components of the pathway are assumed
 * to have resolved as stated, and the model gives P(this component | that).
 */
export interface TaskCondition {
  /** `<scenario_id>:<k>:<outcomes>` (the `condition` column of forecasts and model_calls). */
  code: string;
  scenario_id: string;
  scenario_title: string;
  /** The earlier components in pathway order, each with the outcome assumed (1 YES, 0 NO). */
  assumed: { question_id: string; title: string; outcome: 0 | 1 }[];
}

/** One question to forecast in one mode (every configured model answers it). */
export interface ForecastTask {
  mode: Mode;
  /** Absent or null: a forecast; set: a scenario's conditional forecast (the `conditional` template). */
  condition?: TaskCondition | null;
  question: TaskQuestion;
  /** Used by informed and augmented; null or absent: the prompt says no market price is known. */
  market?: TaskMarket | null;
  /** Used by augmented only; empty or absent: the prompt says no evidence was retrieved. */
  evidence?: TaskEvidence[];
}

export interface RenderedPrompt {
  system: string;
  user: string;
  /** Template version, e.g. "blind.v2". */
  version: string;
  /** sha256 (hex) of `version + "\n" + system + "\n\n" + user`: identical prompts hash identically. */
  hash: string;
  /** Ids of the evidence items shown in the prompt (augmented only; [] otherwise). */
  evidence_ids: string[];
  /** Reasoning languages asked for: the first is the main one, the rest come as translations. */
  langs: string[];
}

/** The system message shared by every mode. */
export const SYSTEM_PROMPT =
  'You are a careful, calibrated forecaster. You estimate probabilities of future events ' +
  'resolving YES under stated resolution criteria. You answer only with the requested JSON object.';

/** Max history days and evidence snippet, title and source address lengths shown in a prompt. */
export const HISTORY_DAYS = 10;
export const SNIPPET_CHARS = 600;
export const EVIDENCE_TITLE_CHARS = 200;
export const EVIDENCE_URL_CHARS = 300;

/**
 * `text` cut to `max` characters, the cut marked with an ellipsis; never between the two halves of
 * a surrogate pair (an emoji): a lone surrogate makes the request JSON that strict parsers refuse.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

const DEFAULT_DIR = fileURLToPath(new URL('../../data/prompts/', import.meta.url));
const templateCache = new Map<string, { version: string; text: string }>();
const TEMPLATE_FILE = /^(blind|informed|augmented|conditional)\.v(\d+)\.txt$/;

/** The templates: one per information mode, and `conditional`, which wraps a mode's prompt. */
export type TemplateName = Mode | 'conditional';

export interface PromptTemplate {
  /** e.g. "blind.v2" */
  version: string;
  /** The template text without its `#` header lines. */
  text: string;
}

/**
 * Reads (and caches) the latest version of a mode's template from `dir` (default `data/prompts/`):
 * the file `<mode>.v<N>.txt` with the highest N. Leading lines starting with `#` are a header, not
 * sent; a `# version: <mode>.v<N>` header must match the file name.
 */
export function loadTemplate(mode: TemplateName, dir: string = DEFAULT_DIR): PromptTemplate {
  const base = dir.replace(/\/?$/, '/');
  const key = `${base}|${mode}`;
  const cached = templateCache.get(key);
  if (cached) return cached;
  let best: { n: number; file: string } | null = null;
  for (const f of readdirSync(base)) {
    const m = TEMPLATE_FILE.exec(f);
    if (m && m[1] === mode && (!best || Number(m[2]) > best.n)) best = { n: Number(m[2]), file: f };
  }
  if (!best) throw new Error(`prompt templates: no ${mode}.v<N>.txt in ${base}`);
  const version = `${mode}.v${best.n}`;
  const lines = readFileSync(`${base}${best.file}`, 'utf8').split('\n');
  let i = 0;
  for (; i < lines.length && lines[i]!.startsWith('#'); i++) {
    const v = /^#\s*version:\s*(\S+)/.exec(lines[i]!);
    if (v && v[1] !== version) {
      throw new Error(`prompt template ${base}${best.file}: header says version ${v[1]}, file name says ${version}`);
    }
  }
  const t = { version, text: lines.slice(i).join('\n') };
  templateCache.set(key, t);
  return t;
}

/**
 * Replaces every `{{name}}` with `vars[name]`, in one pass (substituted values are not expanded
 * again). A placeholder without a value is an error, so a template typo never reaches a model.
 */
export function renderTemplate(template: string, vars: Record<string, string>): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_m, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`prompt template: no value for {{${name}}}`);
    return v;
  });
}

/**
 * Renders the prompt of a task as of `asOf`, asking for the reasoning in `langs[0]` (BCP 47, e.g.
 * "en"; `lang` is the one-language shorthand) and translations in the other languages.
 */
export function renderPrompt(
  task: ForecastTask,
  opts: { asOf: Date; lang?: string; langs?: readonly string[]; templatesDir?: string },
): RenderedPrompt {
  const q = task.question;
  const langs = opts.langs && opts.langs.length > 0 ? [...opts.langs] : [opts.lang ?? 'en'];
  const lang = langs[0]!;
  const evidence = task.mode === 'augmented' ? (task.evidence ?? []) : [];
  const vars: Record<string, string> = {
    as_of: fmtDateTime(opts.asOf),
    title: oneLine(q.title),
    question_id: q.question_id,
    category: q.category ?? 'unspecified',
    domain: q.domain ?? 'unspecified',
    url: q.url ?? 'none',
    created_at: q.created_at ? fmtDate(q.created_at) : 'not stated',
    close_time: q.close_time ? fmtDate(q.close_time) : 'not stated',
    resolution_criteria: block(q.resolution_criteria, 'Not stated: use the plain meaning of the question.'),
    description: block(q.description, 'None given.'),
    quoted_resolution_criteria: quoted(block(q.resolution_criteria, 'Not stated: use the plain meaning of the question.')),
    quoted_description: quoted(block(q.description, 'None given.')),
    market: task.mode === 'blind' ? '' : formatMarket(task.market ?? null),
    evidence: formatEvidence(evidence),
    language: languageName(lang),
    lang,
    language_instructions: languageInstructions(langs),
    reply_shape: replyShape(langs),
  };
  const template = loadTemplate(task.mode, opts.templatesDir);
  let user = renderTemplate(template.text, vars);
  let version = template.version;
  if (task.condition) {
    // The conditional template wraps the mode's prompt: the version names both ("conditional.v2+blind.v3").
    const wrapper = loadTemplate('conditional', opts.templatesDir);
    user = renderTemplate(wrapper.text, {
      scenario: oneLine(task.condition.scenario_title),
      conditions: formatConditions(task.condition),
      mode_prompt: user,
    });
    version = `${wrapper.version}+${template.version}`;
  }
  const hash = createHash('sha256').update(`${version}\n${SYSTEM_PROMPT}\n\n${user}`).digest('hex');
  return {
    system: SYSTEM_PROMPT,
    user,
    version,
    hash,
    evidence_ids: evidence.map((e) => e.evidence_id),
    langs,
  };
}

/**
 * The assumption lines of a conditional prompt (the simulator reads them): one per earlier
 * component. The title, a venue's text, is a JSON string (conditional.v2): bare between quotes, a
 * title with a double quote ended the quoted title and went on as the prompt's words (QA).
 */
export function formatConditions(c: TaskCondition): string {
  return c.assumed.map((a) => `- Assume: ${JSON.stringify(oneLine(a.title))} (${a.question_id}) resolved ${a.outcome === 1 ? 'YES' : 'NO'}.`).join('\n');
}

/** The reasoning-language lines of the prompt (the simulator reads the codes from them). */
export function languageInstructions(langs: readonly string[]): string {
  const [main, ...extra] = langs;
  const lines = [
    `- Write the reasoning (a few sentences) and the key factors (2 to 5 short phrases) in ${languageName(main!)} (language code: ${main}).`,
  ];
  if (extra.length > 0) {
    lines.push(`- Additional languages: ${extra.map((l) => `${l} (${languageName(l)})`).join(', ')}.`);
    lines.push(
      '- Under "translations", give the same reasoning and key factors written in each additional language, ' +
        'keyed by its language code. The probability is one number for all languages.',
    );
  }
  return lines.join('\n');
}

/** The JSON shape the reply must have, as shown in the prompt. */
export function replyShape(langs: readonly string[]): string {
  const base = '"probability": <number 0..1>, "reasoning": "<text>", "key_factors": ["<factor>", ...]';
  const extra = langs.slice(1);
  if (extra.length === 0) return `{${base}}`;
  const tr = extra.map((l) => `"${l}": {"reasoning": "<text>", "key_factors": ["<factor>", ...]}`).join(', ');
  return `{${base}, "translations": {${tr}}}`;
}

/** The market block of informed/augmented prompts. The simulator parses its first line. */
export function formatMarket(m: TaskMarket | null): string {
  if (!m) return 'No market price is available for this question.';
  const lines = [
    `Current market probability of YES: ${pct(m.probability)} (observed ${fmtDateTime(m.observed_at)})`,
    `Volume: ${num(m.volume)}; liquidity: ${num(m.liquidity)}`,
  ];
  const byDay = new Map<string, { t: number; p: number }>();
  for (const h of m.history) {
    const t = h.observed_at.getTime();
    if (t > m.observed_at.getTime() || !Number.isFinite(h.probability)) continue;
    const day = fmtDate(h.observed_at);
    const prev = byDay.get(day);
    if (!prev || prev.t <= t) byDay.set(day, { t, p: h.probability });
  }
  const days = [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).slice(-HISTORY_DAYS);
  if (days.length > 0) {
    lines.push('Recent history (last price of each day, oldest first):');
    for (const [day, { p }] of days) lines.push(`- ${day}: ${pct(p)}`);
  } else {
    lines.push('Recent history: not available.');
  }
  return lines.join('\n');
}

/** The evidence block of augmented prompts: numbered items for citation. */
export function formatEvidence(items: TaskEvidence[]): string {
  if (items.length === 0) return 'No evidence was retrieved.';
  return items
    .map((e, i) => {
      // every part bounded: an evidence file's title or address has no limit of its own (QA)
      const head = `[${i + 1}] ${clip(oneLine(e.title ?? 'Untitled'), EVIDENCE_TITLE_CHARS)}` +
        ` (published ${e.published_at ? fmtDate(e.published_at) : 'date unknown'})`;
      const lines = [head];
      if (e.url) lines.push(`    Source: ${clip(oneLine(e.url), EVIDENCE_URL_CHARS)}`);
      const snippet = oneLine(e.snippet ?? '');
      if (snippet) lines.push(`    ${clip(snippet, SNIPPET_CHARS)}`);
      return lines.join('\n');
    })
    .join('\n');
}

const languageNames = new Map<string, string>();

/** Codes that name no particular language (ISO 639: multiple, none, undetermined, uncoded). */
const NO_LANGUAGE = new Set(['mul', 'zxx', 'und', 'mis']);
/** The unknown region and script (CLDR names them "Unknown Region", "Unknown Script", "Unwritten"). */
const NO_REGION = new Set(['ZZ']);
const NO_SCRIPT = new Set(['Zzzz', 'Zxxx']);
const LANGUAGE_TAG = /^([A-Za-z]{2,3})(?:-([A-Za-z]{4}))?(?:-([A-Za-z]{2}|[0-9]{3}))?$/;

/**
 * Whether `lang` names a language ICU knows (ISO 639: `en`, `haw`, `tlh`), with its script and
 * region, when given, ones ICU names (`zh-Hant`, `pt-BR`, `es-419`). A well-formed but unknown code
 * (`zz`, a typo such as `fe` for `fr`) was accepted in QUORUM_LANGS and the probability endpoint's
 * `langs`, and every model call then asked for reasoning in 'the language with code "fe"' (QA); so
 * were codes for no particular language (`mul`, `zxx`: "No linguistic content") and regions that
 * name none (`en-XY`, `en-ZZ`, "English (XY)"). They are refused where languages are configured.
 */
export function isKnownLanguage(lang: string): boolean {
  const m = LANGUAGE_TAG.exec(lang);
  if (!m) return false;
  const [, language, script, region] = m;
  try {
    const named = (type: 'language' | 'script' | 'region', code: string) =>
      new Intl.DisplayNames(['en'], { type, fallback: 'none' }).of(code) !== undefined;
    if (NO_LANGUAGE.has(language!.toLowerCase()) || !named('language', language!.toLowerCase())) return false;
    if (script !== undefined) {
      const s = script[0]!.toUpperCase() + script.slice(1).toLowerCase();
      if (NO_SCRIPT.has(s) || !named('script', s)) return false;
    }
    if (region !== undefined && (NO_REGION.has(region.toUpperCase()) || !named('region', region.toUpperCase()))) return false;
    return true;
  } catch {
    return false;
  }
}

/** The form two codes of one language share (one definition, shared with the dashboard). */
export { languageKey };

/**
 * A language code as configured or requested: a language subtag of 2-3 letters, optionally a
 * script (4 letters) and a region (2 letters or 3 digits), in that order (`pt-BR`, `zh-Hant`,
 * `zh-Hant-TW`, `es-419`), in any case, naming a known language (isKnownLanguage). `grammar` is
 * the message for a malformed code. QUORUM_LANG(S) and the probability endpoint's `langs` read
 * codes with it, and refuse one language listed twice by languageKey.
 */
export function languageTag(grammar: string) {
  return z
    .string()
    // abort: a malformed code is not also an unknown language (two messages for one fault)
    .regex(LANGUAGE_TAG, { error: grammar, abort: true })
    .refine(isKnownLanguage, { error: (iss) => `unknown language ${JSON.stringify(iss.input)} (ISO 639 codes like en, fr, pt-BR, with a script and region that exist)` });
}

/** The English name of a language code ("fr" → "French"), cached. */
export function languageName(lang: string): string {
  let name = languageNames.get(lang);
  if (name === undefined) {
    name = `the language with code "${lang}"`;
    try {
      const n = new Intl.DisplayNames(['en'], { type: 'language' }).of(lang);
      if (n && n !== lang) name = n;
    } catch {
      // keep the fallback
    }
    languageNames.set(lang, name);
  }
  return name;
}

/**
 * Every line break of Unicode (UAX #14's mandatory breaks, Python's str.splitlines): besides the
 * four JavaScript's `^` and `\s` know (\n, \r, U+2028, U+2029), VT, FF, NEL (U+0085) and the
 * separators U+001C-U+001E, which a model's provider or tokenizer may read as a new line (QA).
 */
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]/;

function oneLine(s: string): string {
  return s.replace(/[\s\x1c-\x1e\x85]+/g, ' ').trim();
}

/**
 * Quoted text, every line indented by two spaces: a venue's question text (anyone may write a
 * Manifold market) can then start no line of the prompt, so it can neither forge the end of the
 * question block (`<<< END QUESTION >>>`, blind.v3, informed.v3, augmented.v4) nor pass for one of
 * the prompt's own lines (the market price, an evidence item `[n]`, the languages asked for).
 * Its lines are parted at every Unicode line break (LINE_BREAK), and joined with "\n".
 */
function quoted(text: string): string {
  // every kind of line break made "\n" first: `^` alone indented no line after a NEL, VT or FF (QA)
  return text.split(LINE_BREAK).map((line) => `  ${line}`).join('\n');
}

function block(s: string | null, fallback: string): string {
  const t = (s ?? '').trim();
  return t === '' ? fallback : t;
}

function pct(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function num(n: number | null): string {
  return n === null || !Number.isFinite(n) ? 'unknown' : INTEGER.format(n);
}

function fmtDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function fmtDateTime(d: Date): string {
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
