/**
 * Forecast prompts: the three information modes as template files (`data/prompts/<mode>.txt`)
 * and a tiny `{{placeholder}}` renderer.
 *
 * The ladder (DESIGN §6): blind = question, resolution criteria and dates; informed adds the
 * question's background, the market probability, its recent history, volume and liquidity;
 * augmented adds retrieved evidence numbered [1], [2]… for citation. The prompt is rendered from
 * what the task carries: as-of filtering (no price or evidence from after the run's as-of time) is
 * the caller's job (DESIGN §5).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

/** One question to forecast in one mode (every configured model answers it). */
export interface ForecastTask {
  mode: Mode;
  question: TaskQuestion;
  /** Used by informed and augmented; null or absent: the prompt says no market price is known. */
  market?: TaskMarket | null;
  /** Used by augmented only; empty or absent: the prompt says no evidence was retrieved. */
  evidence?: TaskEvidence[];
}

export interface RenderedPrompt {
  system: string;
  user: string;
  /** sha256 (hex) of `system + "\n\n" + user`: identical prompts hash identically. */
  hash: string;
  /** Ids of the evidence items shown in the prompt (augmented only; [] otherwise). */
  evidence_ids: string[];
}

/** The system message shared by every mode. */
export const SYSTEM_PROMPT =
  'You are a careful, calibrated forecaster. You estimate probabilities of future events ' +
  'resolving YES under stated resolution criteria. You answer only with the requested JSON object.';

/** Max history days and evidence snippet length shown in a prompt. */
export const HISTORY_DAYS = 10;
export const SNIPPET_CHARS = 600;

const DEFAULT_DIR = fileURLToPath(new URL('../../data/prompts/', import.meta.url));
const templateCache = new Map<string, string>();

/** Reads (and caches) the template of a mode from `dir` (default `data/prompts/`). */
export function loadTemplate(mode: Mode, dir: string = DEFAULT_DIR): string {
  const path = `${dir.replace(/\/?$/, '/')}${mode}.txt`;
  let t = templateCache.get(path);
  if (t === undefined) {
    t = readFileSync(path, 'utf8');
    templateCache.set(path, t);
  }
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

/** Renders the prompt of a task as of `asOf`, asking for reasoning in `lang` (BCP 47, e.g. "en"). */
export function renderPrompt(
  task: ForecastTask,
  opts: { asOf: Date; lang?: string; templatesDir?: string },
): RenderedPrompt {
  const q = task.question;
  const lang = opts.lang ?? 'en';
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
    market: task.mode === 'blind' ? '' : formatMarket(task.market ?? null),
    evidence: formatEvidence(evidence),
    language: languageName(lang),
  };
  const user = renderTemplate(loadTemplate(task.mode, opts.templatesDir), vars);
  const hash = createHash('sha256').update(`${SYSTEM_PROMPT}\n\n${user}`).digest('hex');
  return { system: SYSTEM_PROMPT, user, hash, evidence_ids: evidence.map((e) => e.evidence_id) };
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
      const head = `[${i + 1}] ${oneLine(e.title ?? 'Untitled')}` +
        ` (published ${e.published_at ? fmtDate(e.published_at) : 'date unknown'})`;
      const lines = [head];
      if (e.url) lines.push(`    Source: ${e.url}`);
      const snippet = oneLine(e.snippet ?? '');
      if (snippet) {
        lines.push(`    ${snippet.length > SNIPPET_CHARS ? `${snippet.slice(0, SNIPPET_CHARS - 1)}…` : snippet}`);
      }
      return lines.join('\n');
    })
    .join('\n');
}

function languageName(lang: string): string {
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(lang);
    if (name && name !== lang) return name;
  } catch {
    // fall through
  }
  return `the language with code "${lang}"`;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
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
