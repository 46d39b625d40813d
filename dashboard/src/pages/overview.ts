/**
 * Overview: headline accuracy and Brier of the consensus against the market (with intervals), the
 * reliability diagram (consensus, market, each model; Wilson bands; the diagonal), the leaderboard
 * with interval bars, the value of each information mode, disagreement against error, and health.
 * Public reads: accuracy, events accuracy (bins), service stats, resolved predictions (the
 * disagreement scatter). Keyed (api plan): leaderboard, information value, the disagreement test.
 */
import { get, getPlain, type Result } from '../api.ts';
import type { BinRow, IntervalRow } from '../charts.ts';
import { OVERVIEW_RESOLVED_LIMIT } from '../first-reads.ts';
import { loadCharts } from '../lazy-charts.ts';
import { canFitLine, FIT_MIN_POINTS } from '../linear-fit.ts';
import { counted, dateTime, h, hashHref, ignoredInLink, linkChoice, hashQuery, interval, navigate, nothingMatches, notice, num, panel, pct, percent, select, signed, tableRegion, wilson } from '../ui.ts';

interface Accuracy {
  simulated: boolean;
  providers: string[];
  accuracy_pct: number | null;
  n_directional: number;
  n_correct: number;
  total_resolved: number;
  market_accuracy_pct: number | null;
  brier: { ai: number | null; market: number | null; n: number };
  resolved_brier: number | null;
  ai_vs_market: { n: number; ai_brier: number | null; market_brier: number | null; skill: number | null; diff_mean: number | null; diff_ci95: [number, number] | null; n_directional: number; ai_accuracy_pct: number | null; market_accuracy_pct: number | null } | null;
  as_of: string;
}
interface Forecaster { forecaster: string; kind: string; mode: string; n: number; brier: number | null; ece: number | null; bins: (Omit<BinRow, 'forecaster'>)[] }
interface EventsAccuracy { forecasters: Forecaster[]; simulated: boolean }
interface Stats { questions: Record<string, number>; scored_count: number; simulated: boolean; providers: string[]; as_of?: string }
interface LeaderItem {
  mode: string; forecaster: string; kind: string; rank: number; n: number; is_best: boolean;
  /** The ranking's score: Brier with each question's difficulty (its mean Brier over all forecasters) taken out. */
  brier_adjusted: number | null;
  /** The raw mean Brier, and its 95% bootstrap interval (the API has no interval of the adjusted one). */
  brier: number | null; brier_ci95: [number, number] | null;
  /** Questions of the mode's cell (any forecaster), and whether they are enough to rank on (the API's threshold). */
  n_questions: number; sufficient: boolean;
}
interface InfoItem { forecaster: string; blind_to_informed: Step | null; informed_to_augmented: Step | null }
interface Step { n: number; value: number | null; value_ci95: [number, number] | null }
interface DisItem { mode: string; verdict: string; spearman: number | null; spearman_ci95: [number, number] | null }
interface Resolved { predictions: { question_id: string; title: string; disagreement: { sd: number | null } | null; ai_error: number | null }[] }

const MODES = ['headline', 'blind', 'informed', 'augmented'];

export async function overviewPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  const ignored: string[] = [];
  // in any case (`?mode=Blind` is blind); another value is named (outside test: the headline, silently)
  const mode = linkChoice(q, 'mode', MODES, 'headline', ignored, `one of ${MODES.join(', ')}`, true);
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  const [{ intervals, reliability, scatter }, acc, events, stats, ready, resolved, board, info, dis] = await Promise.all([
    loadCharts(),
    get<Accuracy>('predictions.accuracy'),
    get<EventsAccuracy>('events.accuracy'),
    get<Stats>('events.service_stats'),
    getPlain<{ status: string; snapshot?: string }>('/readyz'),
    get<Resolved>('predictions.resolved', {}, { limit: OVERVIEW_RESOLVED_LIMIT }),
    get<{ items: LeaderItem[] }>('leaderboard', {}, mode === 'headline' ? {} : { mode }),
    get<{ items: InfoItem[] }>('analysis.information_value'),
    get<{ items: DisItem[] }>('analysis.disagreement'),
  ]);

  root.append(h('h1', {}, 'Overview'));
  const simulated = (acc.kind === 'ok' && acc.body.simulated) || (stats.kind === 'ok' && stats.body.simulated);
  if (simulated) {
    root.append(h('p', { class: 'badge simulated', role: 'status' },
      'SIMULATED FORECASTS: no real models are configured; every forecast here comes from the bundled model simulator (provider “simulated”).'));
  }
  root.append(ignoredInLink(ignored) ?? '', select('mode', 'Mode', MODES.map((m) => [m, m]), mode));
  root.querySelector('select[name=mode]')!.addEventListener('change', (e) => {
    const value = (e.target as HTMLSelectElement).value;
    navigate(hashHref('/', { mode: value === 'headline' ? undefined : value }), 'f-mode');
  });

  // Headline figures. Consensus against market on the same questions: the pairs where both have a
  // direction (ai_vs_market.n_directional) for accuracy, the scored pairs (ai_vs_market.n) for
  // Brier. The consensus over every resolved question is said as such, beside.
  if (acc.kind === 'ok') {
    const a = acc.body;
    const vs = a.ai_vs_market;
    const band = (accuracyPct: number | null, n: number): string => {
      if (accuracyPct === null || n === 0) return '';
      const ci = wilson(Math.round((accuracyPct / 100) * n), n);
      return `95% ${pct(ci[0])}–${pct(ci[1])} · `;
    };
    const all = `all resolved: ${percent(a.accuracy_pct)} (${a.n_correct}/${a.n_directional} with a direction, of ${a.total_resolved})`;
    const accuracyCards = vs
      ? [
        card('Consensus accuracy, paired', percent(vs.ai_accuracy_pct), `${band(vs.ai_accuracy_pct, vs.n_directional)}paired n ${vs.n_directional} · ${all}`, 'acc-consensus'),
        card('Market accuracy, paired', percent(vs.market_accuracy_pct), `${band(vs.market_accuracy_pct, vs.n_directional)}paired n ${vs.n_directional}`, 'acc-market'),
      ]
      : [
        card('Consensus accuracy, all resolved', percent(a.accuracy_pct), `${band(a.accuracy_pct, a.n_directional)}n ${a.n_directional} with a direction, of ${a.total_resolved}`, 'acc-consensus'),
        card('Market accuracy', '–', 'no question with a usable market price', 'acc-market'),
      ];
    root.append(panel('Headline: consensus against the market',
      h('div', { class: 'cards' },
        ...accuracyCards,
        card('Brier, consensus', num(vs?.ai_brier ?? a.brier.ai), `${vs ? `paired n ${vs.n} · ` : ''}all resolved: ${num(a.resolved_brier)} (n ${a.total_resolved})`),
        card('Brier, market', num(vs?.market_brier ?? a.brier.market), vs ? `paired n ${vs.n}` : ''),
        // signed figures with a true minus, as edges, gaps and a source's bias are (outside test: "-0.018")
        card('Consensus − market', vs?.diff_mean === null || !vs ? '–' : signed(num(vs.diff_mean, 4)), vs?.diff_ci95 ? `95% ${interval(vs.diff_ci95, 4)} · skill ${signed(num(vs.skill))}` : ''),
      ),
      h('p', { class: 'note' }, 'Paired: the questions with a usable market price, so consensus and market are compared on the same questions. ',
        'Brier: lower is better. The difference is the mean paired Brier difference (negative: the consensus beat the market).')));
  } else root.append(panel('Headline', notice(acc, 'The accuracy summary')));

  // Reliability diagram
  // No resolved question yet (a new deployment): said, instead of empty axes and a table of
  // headers alone (QA).
  if (events.kind === 'ok' && !events.body.forecasters.some((f) => f.mode === mode && f.n > 0)) {
    root.append(panel('Reliability diagram', nothingMatches(undefined, `No scored forecast in the ${mode} mode yet: the diagram fills in once questions resolve.`)));
  } else if (events.kind === 'ok') {
    const fs = events.body.forecasters.filter((f) => f.mode === mode);
    const names = fs.map((f) => f.forecaster);
    const rows: BinRow[] = fs.flatMap((f) => f.bins.map((b) => ({ ...b, forecaster: f.forecaster })));
    const chart = h('figure', { class: 'chart', id: 'reliability', 'data-forecasters': names.length });
    chart.append(reliability(rows, names, width), h('figcaption', {}, `Reliability, ${mode} mode: ten probability bins per forecaster, Wilson 95% bands, the diagonal is perfect calibration.`));
    root.append(panel('Reliability diagram', chart,
      tableRegion('Calibration per forecaster', h('table', {}, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'forecaster'), h('th', { scope: 'col' }, 'n'), h('th', { scope: 'col' }, 'Brier'), h('th', { scope: 'col' }, 'ECE'))),
        h('tbody', {}, fs.map((f) => h('tr', {}, h('td', {}, f.forecaster), h('td', {}, f.n), h('td', {}, num(f.brier)), h('td', {}, num(f.ece)))))))));
  } else root.append(panel('Reliability diagram', notice(events, 'The calibration summary')));

  // Leaderboard
  const boardItems = board.kind === 'ok' ? board.body.items.filter((i) => (mode === 'headline' ? i.mode === 'augmented' : i.mode === mode)) : [];
  if (board.kind === 'ok' && boardItems.length === 0) {
    root.append(panel('Leaderboard', nothingMatches(undefined, `No forecaster scored in the ${mode === 'headline' ? 'augmented' : mode} mode yet: the leaderboard fills in once questions resolve.`)));
  } else if (board.kind === 'ok') {
    const items = boardItems;
    root.append(panel('Leaderboard', h('figure', { class: 'chart', id: 'leaderboard' },
      intervals(leaderboardRows(items), { width, xLabel: 'difficulty-adjusted Brier (lower is better)', groups: ['consensus', 'market', 'model'] }),
      h('figcaption', {}, `${mode === 'headline' ? 'augmented' : mode} mode, latest round. Ranked and drawn by the difficulty-adjusted Brier: `,
        'each question\'s mean Brier over all forecasters is taken out, so a forecaster scored on fewer or easier questions gains nothing by it. ',
        'Bars: the raw Brier\'s 95% bootstrap interval, moved by the same adjustment (the API gives no interval of the adjusted Brier itself).')),
    insufficientNote(items), leaderboardTable(items)));
  } else root.append(panel('Leaderboard', notice(board, 'The leaderboard')));

  // Value of each information mode
  if (info.kind === 'ok') {
    const rows: IntervalRow[] = [];
    for (const i of info.body.items) {
      for (const [step, v] of [['blind → informed', i.blind_to_informed], ['informed → augmented', i.informed_to_augmented]] as const) {
        if (v && v.value !== null && v.value_ci95) rows.push({ label: i.forecaster, value: v.value, lo: v.value_ci95[0], hi: v.value_ci95[1], group: step });
      }
    }
    root.append(panel('Value of each information mode', rows.length === 0
      ? nothingMatches(undefined, 'No question scored in two modes yet: the comparison fills in once questions resolve.')
      : h('figure', { class: 'chart', id: 'information-value' },
      intervals(rows, { width, xLabel: 'Brier improvement (95% interval)', zero: true, groups: ['blind → informed', 'informed → augmented'] }),
      h('figcaption', {}, 'How much each step of information lowers the Brier score; right of zero helps.'))));
  } else root.append(panel('Value of each information mode', notice(info, 'The information-value analysis')));

  // Disagreement against error (the x axis names no count of models: the models file sets it, and a
  // model whose call failed leaves a question with one fewer). The resolved predictions carry each question's headline consensus
  // only, so the scatter is the headline's in every mode; the verdict under it is the headline's
  // too (the same basis), and another mode's verdict is added, labelled as not drawn.
  const disPanel = panel('Disagreement against error');
  if (resolved.kind === 'ok') {
    const pts = resolved.body.predictions
      .filter((p) => p.disagreement?.sd !== null && p.disagreement?.sd !== undefined && p.ai_error !== null)
      .map((p) => ({ x: p.disagreement!.sd!, y: p.ai_error!, label: p.title }));
    if (pts.length === 0) disPanel.append(nothingMatches(undefined, 'No resolved question with a scored consensus yet: the chart fills in once questions resolve.'));
    else {
      // A fit and its band only where they are defined (linear-fit.ts): said in the caption either way.
      const fit = canFitLine(pts.map((p) => p.x));
      disPanel.append(h('figure', { class: 'chart', id: 'disagreement' }, scatter(pts, { width, xLabel: 'disagreement (sd of the models\' forecasts)', yLabel: 'consensus Brier', fit }),
        h('figcaption', {}, `Headline consensus of the ${pts.length} most recently resolved questions (public), `,
          fit ? 'with a linear fit and its 95% band' : `too few to fit a line (a fit and its 95% band need ${FIT_MIN_POINTS} questions of different disagreement)`,
          mode === 'headline' ? '.' : `; the resolved predictions carry the headline consensus only, so this chart is not of the ${mode} mode.`)));
    }
  } else disPanel.append(notice(resolved, 'Resolved predictions'));
  if (dis.kind === 'ok') {
    const headline = dis.body.items.find((i) => i.mode === 'headline');
    const chosen = dis.body.items.find((i) => i.mode === mode);
    if (headline) disPanel.append(h('p', { class: 'verdict', 'data-mode': 'headline' }, h('strong', {}, 'Headline consensus (drawn above): '), headline.verdict));
    if (chosen && chosen !== headline) {
      disPanel.append(h('p', { class: 'verdict-mode', 'data-mode': chosen.mode }, h('strong', {}, `${chosen.mode[0]!.toUpperCase()}${chosen.mode.slice(1)} mode (all its resolved questions, not drawn): `), chosen.verdict));
    }
  } else disPanel.append(notice(dis, 'The disagreement test (Spearman, quintiles)'));
  root.append(disPanel);

  // Health
  const healthRows: [string, string][] = [['readiness', readiness(ready)]];
  if (stats.kind === 'ok') {
    for (const [k, v] of Object.entries(stats.body.questions)) healthRows.push([`questions ${k}`, String(v)]);
    healthRows.push(['scored', String(stats.body.scored_count)], ['providers', stats.body.providers.join(', ')]);
  }
  // A time to the minute in UTC, as the other times shown (QA: the raw ISO string,
  // "2026-11-29T05:13:42.747Z", where every other time reads "2026-11-29 05:13").
  if (acc.kind === 'ok') healthRows.push(['snapshot as of (UTC)', dateTime(acc.body.as_of)]);
  root.append(panel('System health', h('dl', { class: 'health' }, healthRows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    stats.kind === 'ok' ? null : notice(stats, 'Platform statistics')));
}

/**
 * The readiness line of the health panel from GET /readyz: "ready"; "not ready" with the server's
 * reason when it answered 503; that the service cannot be reached when no answer came (QA: a
 * stopped server read "not ready", as if it had answered); another status as such.
 */
function readiness(ready: Result<{ status: string }>): string {
  if (ready.kind === 'ok') return ready.body.status;
  if (ready.kind !== 'error') return 'unknown';
  if (ready.status === null) return 'the service cannot be reached (no answer from the server)';
  if (ready.status === 503) return `not ready: ${ready.message}`;
  return `unknown (HTTP ${ready.status}: ${ready.message})`;
}

/**
 * The leaderboard's chart rows: the difficulty-adjusted Brier, the score the ranks come from, so
 * the order drawn is the order ranked (the raw Brier can invert it: a model that skipped a hard
 * question has a flattering raw mean). The interval is the raw Brier's, shifted by the forecaster's
 * adjustment (adjusted − raw): it keeps the width of the raw interval around the value drawn.
 */
function leaderboardRows(items: LeaderItem[]): IntervalRow[] {
  return items.flatMap((i) => {
    if (i.brier_adjusted === null || i.brier === null || !i.brier_ci95) return [];
    const shift = i.brier_adjusted - i.brier;
    return [{
      label: `${i.rank}. ${i.forecaster}`, value: i.brier_adjusted, lo: i.brier_ci95[0] + shift, hi: i.brier_ci95[1] + shift, group: i.kind,
      title: `${i.rank}. ${i.forecaster} (${i.kind}): difficulty-adjusted Brier ${num(i.brier_adjusted, 4)}; raw Brier ${num(i.brier, 4)} ${interval(i.brier_ci95, 4)} over ${counted(i.n, 'question')}`,
    }];
  });
}

/** Questions a leaderboard cell needs before the API calls its ranking sufficient (`sufficient`). */
const SUFFICIENT_FROM = 20;

/**
 * What a ranking over too few questions says of itself: the API marks such a cell insufficient, and
 * its ranks are then mostly noise (outside test: eight forecasters ranked 1 to 8 on 2 questions, with
 * nothing to say so but the questions column). Null when the cell is sufficient.
 */
function insufficientNote(items: LeaderItem[]): HTMLElement | null {
  if (items.every((i) => i.sufficient)) return null;
  const n = Math.max(...items.map((i) => i.n_questions));
  return h('p', { class: 'notice insufficient', id: 'leaderboard-insufficient', role: 'note' },
    `Insufficient: only ${counted(n, 'question')} scored in this mode, under the ${SUFFICIENT_FROM} a ranking needs; these ranks are not yet meaningful.`);
}

/** Every forecaster of the mode with both scores: the ranking's and the raw Brier with its interval. */
function leaderboardTable(items: LeaderItem[]): HTMLElement {
  return tableRegion('Leaderboard table', h('table', { id: 'leaderboard-table' },
    h('thead', {}, h('tr', {}, ['rank', 'forecaster', 'difficulty-adjusted Brier', 'raw Brier', 'raw Brier, 95% interval', 'questions'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((i) => h('tr', {},
      h('td', { class: 'num' }, i.rank), h('td', {}, i.forecaster), h('td', { class: 'num' }, num(i.brier_adjusted, 4)),
      h('td', { class: 'num' }, num(i.brier, 4)), h('td', { class: 'num' }, interval(i.brier_ci95, 4) || '–'), h('td', { class: 'num' }, i.n))))));
}

function card(title: string, value: string, sub: string, id?: string): HTMLElement {
  return h('div', { class: 'card', id }, h('div', { class: 'card-title' }, title), h('div', { class: 'card-value' }, value), h('div', { class: 'card-sub' }, sub));
}
