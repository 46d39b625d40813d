/**
 * One question: consensus per mode over the runs and the market price, each model's forecasts
 * with reasoning in the chosen language, evidence with links, lifecycle, and scores once resolved.
 * Detail and lifecycle are public reads during the beta.
 */
import { get } from '../api.ts';
import type { SeriesRow } from '../charts.ts';
import { languageKey, matchLanguage } from '../languages.ts';
import { loadCharts } from '../lazy-charts.ts';
import { date, excerpt, firstText, h, hashHref, hashQuery, ignoredInLink, navigate, nothingMatches, notice, num, panel, pct, select, signedPoints, tableRegion, webUrl } from '../ui.ts';

// The parts of the API's PredictionDetail and lifecycle the page reads, nullable as in the OpenAPI document.
interface Scores { outcome: number | null; brier: number | null; log_loss: number | null; direction: string | null; market_probability: number | null; market_brier: number | null }
interface ModelF { model: string; provider: string | null; probability: number | null; created_at: string | null; scores: Scores | null; texts: { lang: string | null; translation_of: string | null; reasoning: string | null }[] }
interface Mode { mode: string; forecast_at: string | null; consensus: { mean: number | null }; disagreement: { sd: number | null }; scores: Scores | null; models: ModelF[] }
interface Detail {
  question: { question_id: string; title: string | null; description: string | null; url: string | null; venue: string | null; category: string | null; status: string; close_time: string | null; resolution_criteria: string | null };
  headline: { mode: string } | null;
  market: { probability: number | null; observed_at: string | null; stale: boolean | null } | null;
  modes: Mode[];
  langs: string[];
  history: { mode: string; consensus: { mean: number | null }; created_at: string | null }[];
  /** More consensus rows than the detail's 1,000: history holds the latest only. */
  history_truncated?: boolean;
  evidence: { evidence_id: string; title: string | null; url: string | null; published_at: string | null; snippet: string | null; source: { name: string | null } | null }[];
  other_venues?: { question_id: string; venue: string | null; title: string | null; sign: number; market_probability: number | null; implied_probability: number | null; gap: number | null }[];
  resolution: { outcome: number | null; annulled?: boolean; annulled_reason?: string | null; resolved_at: string | null; source: { name: string | null; url: string | null } | null; evidence_excerpt: string | null } | null;
}
interface Lifecycle { states: { seq: number; state: string; at: string | null; reason: string | null }[]; taxonomy: { horizon: { days: number | null; bucket: string | null } | null } | null }

/**
 * The reasoning language shown: the one asked for in the link (`?lang=`, matched as the API matches
 * language tags: in any case, or another code of the language, so `iw` on a question stored as `he`
 * is Hebrew; outside test: "no reasoning in iw"), else the models' main language (their answers as
 * given, `translation_of` null), else the first listed. `langs` is sorted, so its first was shown by
 * default: with QUORUM_LANGS=en,fr,pt-BR,de a question opened in German (QA).
 */
function shownLang(d: Detail, asked: string | null): string {
  const hit = asked === null ? undefined : matchLanguage(d.langs, asked);
  if (hit !== undefined) return hit;
  const main = d.modes.flatMap((m) => m.models.flatMap((x) => x.texts)).find((t) => t.translation_of === null && t.lang !== null)?.lang;
  return main && d.langs.includes(main) ? main : (d.langs[0] ?? 'en');
}

/** `text`'s paragraphs (split at blank lines), each with its runs of white space made one space; none for no text. */
const paragraphs = (text: string | null): string[] =>
  (text ?? '').split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter((p) => p !== '');

/**
 * What the question resolves on, and its background (the venue's description, folded: it can be
 * long). The API serves both with the detail and the page showed neither (outside test: a reader
 * saw a title and forecasts, never the criteria they are scored against). Null when it has neither.
 */
function criteriaPanel(q: Detail['question']): HTMLElement | null {
  const [criteria, background] = [paragraphs(q.resolution_criteria), paragraphs(q.description)];
  if (criteria.length === 0 && background.length === 0) return null;
  return panel('Resolution criteria',
    h('div', { id: 'resolution-criteria' }, criteria.length ? criteria.map((p) => h('p', {}, p)) : h('p', {}, 'None given with this question.')),
    background.length ? h('details', { id: 'question-background' }, h('summary', {}, 'Background'), background.map((p) => h('p', {}, p))) : null);
}

/**
 * The market price the caption gives: "now 42%" (", stale" when the API says so) while the question
 * is active; once it is not, the last price and when it was observed (outside test: a resolved
 * question's caption read "now 40%, stale", a price neither current nor going to be refreshed).
 */
function marketNow(d: Detail): string {
  const p = pct(d.market?.probability);
  if (d.question.status === 'active') return `now ${p}${d.market?.stale ? ', stale' : ''}`;
  const at = d.market?.observed_at ? ` on ${d.market.observed_at.slice(0, 10)} (UTC)` : '';
  return `last ${p}${at}, the question ${d.question.status}`;
}

export async function questionPage(root: HTMLElement, id: string | undefined): Promise<void> {
  const q = hashQuery();
  const [{ timeline }, detail, life] = await Promise.all([
    loadCharts(),
    get<Detail>('predictions.detail', { market_id: id ?? '' }),
    get<Lifecycle>('predictions.lifecycle', { question_id: id ?? '' }),
  ]);
  if (detail.kind !== 'ok') {
    // A way on from a dead link, as a source's page has (outside test: only the browser's Back).
    root.append(h('h1', {}, 'Question'), notice(detail, 'This question'), h('p', {}, h('a', { href: '#/predictions' }, 'Active predictions')));
    return;
  }
  const d = detail.body;
  const lang = shownLang(d, q.get('lang'));
  // A language the question has no reasoning in is named, the one shown instead said (outside test: silently another).
  const askedLang = q.get('lang') ?? '';
  const ignored = askedLang !== '' && d.langs.length > 0 && matchLanguage(d.langs, askedLang) === undefined ? [`lang=${askedLang} (one of ${d.langs.join(', ')}; shown in ${lang})`] : [];
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  root.append(h('h1', {}, firstText(d.question.title, d.question.question_id)),
    h('p', { class: 'meta' }, `${d.question.venue ?? '–'} · ${d.question.category ?? 'uncategorised'} · ${d.question.status}`,
      d.question.close_time ? ` · closes ${d.question.close_time.slice(0, 10)} (UTC)` : '',
      webUrl(d.question.url) ? [' · ', h('a', { href: webUrl(d.question.url), rel: 'noopener noreferrer' }, 'on the venue')] : ''));
  if (d.modes.some((m) => m.models.some((x) => x.provider === 'simulated'))) {
    root.append(h('p', { class: 'badge simulated', role: 'status' }, 'SIMULATED: these forecasts come from the model simulator, not real models.'));
  }

  root.append(ignoredInLink(ignored) ?? '', criteriaPanel(d.question) ?? '');

  // Consensus per mode over time, and the market price
  // Points need both a time and a probability: a run without either has no place on the chart.
  const rows: SeriesRow[] = d.history.flatMap((r) => (r.created_at === null || r.consensus.mean === null ? [] :
    [{ t: new Date(r.created_at), p: r.consensus.mean, series: `consensus (${r.mode})` }]));
  for (const m of d.modes) {
    const p = m.scores?.market_probability;
    if (p !== null && p !== undefined && m.forecast_at !== null) rows.push({ t: new Date(m.forecast_at), p, series: 'market' });
  }
  if (d.market?.probability !== null && d.market?.probability !== undefined && d.market.observed_at) rows.push({ t: new Date(d.market.observed_at), p: d.market.probability, series: 'market' });
  const uniq = new Map(rows.map((r) => [`${r.series}|${r.t.getTime()}`, r]));
  const series = [...new Set([...uniq.values()].map((r) => r.series))].sort();
  // Nothing to draw (no run gave a consensus, no market price was read): said, instead of empty axes (QA).
  root.append(panel('Consensus and market over time', uniq.size === 0
    ? nothingMatches(undefined, 'No consensus and no market price to draw yet: no run has given this question a consensus, and no market price has been read.')
    : h('figure', { class: 'chart', id: 'timeline' }, timeline([...uniq.values()], series, width),
    h('figcaption', {}, `Consensus per mode at each run, and the market price (${marketNow(d)}).`,
      // (the detail keeps the latest 1,000 rows; the rest are in the snapshot's consensus.parquet)
      d.history_truncated ? ' Only the latest 1,000 consensus points are drawn; earlier runs are in the consensus table of the Parquet snapshot.' : ''))));

  // Each model's forecasts and reasoning
  const langPick = d.langs.length > 1 ? select('lang', 'Reasoning language', d.langs.map((l): [string, string] => [l, l]), lang) : null;
  langPick?.querySelector('select')?.addEventListener('change', (e) => {
    navigate(hashHref(`/questions/${encodeURIComponent(d.question.question_id)}`, { lang: (e.target as HTMLSelectElement).value }), 'f-lang');
  });
  const models = panel('Each model\'s forecasts', langPick);
  for (const m of d.modes) {
    models.append(h('h3', {}, `${m.mode}: consensus ${pct(m.consensus.mean)}, disagreement ${num(m.disagreement.sd)}`),
      tableRegion(`Forecasts by model, ${m.mode} mode`, h('table', { class: 'models' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'model'), h('th', { scope: 'col' }, 'probability'), h('th', { scope: 'col' }, 'Brier'), h('th', { scope: 'col' }, 'reasoning'))),
        h('tbody', {}, m.models.map((x) => {
          // The text says its language (lang) and takes its direction from its first strong
          // character (dir=auto): Arabic or Hebrew reasoning is right-to-left in this page (QA).
          // (a mode whose run stored the language under another code, `iw` beside `he`, shows it too)
          const text = x.texts.find((t) => t.lang === lang) ?? x.texts.find((t) => t.lang !== null && languageKey(t.lang) === languageKey(lang)) ?? x.texts[0];
          return h('tr', {}, h('td', {}, x.model), h('td', { class: 'num' }, pct(x.probability)), h('td', { class: 'num' }, num(x.scores?.brier)),
            h('td', { class: 'reasoning', lang: text?.lang ?? undefined, dir: 'auto' }, text?.reasoning ?? '–'));
        })))));
  }
  root.append(models);

  // Scores once resolved
  if (d.resolution) {
    const r = d.resolution;
    root.append(panel('Resolution and scores',
      // An annulment is no outcome: "Annulled on …", with the source's reason when it gives one
      // (QA: "Resolved annulled on …"); YES and NO read "Resolved YES on …".
      h('p', { id: 'resolution' }, `${r.outcome === 1 ? 'Resolved YES' : r.outcome === 0 ? 'Resolved NO' : 'Annulled'} on ${r.resolved_at ? `${r.resolved_at.slice(0, 10)} (UTC)` : '–'}${r.outcome !== 1 && r.outcome !== 0 && r.annulled_reason ? ` (${r.annulled_reason})` : ''} per `,
        webUrl(r.source?.url) ? h('a', { href: webUrl(r.source?.url), rel: 'noopener noreferrer' }, firstText(r.source?.name, r.source?.url)) : firstText(r.source?.name, 'its source'), r.evidence_excerpt ? ` (“${r.evidence_excerpt}”)` : ''),
      tableRegion('Scores per mode', h('table', { id: 'scores' }, h('thead', {}, h('tr', {}, ['mode', 'consensus Brier', 'market Brier', 'direction'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, d.modes.filter((m) => m.scores).map((m) => h('tr', {}, h('td', {}, m.mode), h('td', { class: 'num' }, num(m.scores!.brier)), h('td', { class: 'num' }, num(m.scores!.market_brier)), h('td', {}, m.scores!.direction ?? '–'))))))));
  }

  // Evidence
  root.append(panel('Evidence (dates in UTC)', d.evidence.length === 0 ? h('p', {}, 'No evidence was used.') :
    h('ul', { class: 'evidence' }, d.evidence.map((e) => h('li', {}, webUrl(e.url) ? h('a', { href: webUrl(e.url), rel: 'noopener noreferrer' }, firstText(e.title, e.url)) : firstText(e.title, e.evidence_id),
      ` · ${e.source?.name ?? ''} ${e.published_at?.slice(0, 10) ?? ''}`, e.snippet ? h('div', { class: 'snippet' }, excerpt(e.snippet, 280)) : '')))));

  // Lifecycle
  root.append(panel('Lifecycle (dates in UTC)', life.kind !== 'ok' ? notice(life, 'The lifecycle') :
    h('ol', { class: 'lifecycle' }, life.body.states.map((s) => h('li', {}, h('strong', {}, s.state), ` ${date(s.at)}: ${s.reason ?? ''}`))),
    life.kind === 'ok' && life.body.taxonomy?.horizon ? h('p', {}, `Horizon: ${life.body.taxonomy.horizon.days === null ? '–' : Math.round(life.body.taxonomy.horizon.days)} days (${life.body.taxonomy.horizon.bucket ?? '–'}).`) : null));
  // The same event on other venues (issue 12's same_event links, served with the detail)
  const others = d.other_venues;
  root.append(panel('The same question on other venues',
    others === undefined
      ? h('p', { class: 'notice missing', 'data-state': 'missing', id: 'other-venues' }, 'Not available yet: this snapshot was published before same-event links existed.')
      : others.length === 0
        ? h('p', { id: 'other-venues', 'data-state': 'empty' }, 'No other venue lists this event.')
        : tableRegion('Other venues table', h('table', { id: 'other-venues', 'data-state': 'ok' },
          h('thead', {}, h('tr', {}, ['question', 'venue', 'price', 'as this question\'s YES', 'gap'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, others.map((o) => h('tr', {}, h('td', {}, h('a', { href: `#/questions/${encodeURIComponent(o.question_id)}` }, o.title ?? o.question_id), o.sign < 0 ? ' (negated)' : ''),
            h('td', {}, o.venue ?? '–'), h('td', { class: 'num' }, pct(o.market_probability)), h('td', { class: 'num' }, pct(o.implied_probability)),
            h('td', { class: 'num' }, signedPoints(o.gap, 'pts'))))))),
    h('p', { class: 'note' }, 'Linked questions other than the same event (similar or curated links) are not served by the API yet.')));
}
