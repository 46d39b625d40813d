/**
 * The dashboard: a hash router over the pages (links are shareable: the page and its filters live in
 * the URL, e.g. #/predictions?category=politics&sort=disagreement). Each page renders into <main>;
 * when it is done, <main> gets data-ready="1" and the performance mark "quorum:rendered" (the browser
 * tests wait on the first and measure the second).
 */
import { apiKey, KEY_CHECKED_EVENT, keyCheck, routesConfig, setApiKey, type KeyCheck } from './api.ts';
import { overviewPage } from './pages/overview.ts';
import { predictionsPage } from './pages/predictions.ts';
import { questionPage } from './pages/question.ts';
import { sourcePage, sourcesPage } from './pages/sources.ts';
import { factorsPage } from './pages/factors.ts';
import { scenarioPage, scenariosPage } from './pages/scenarios.ts';
import { thesesPage, thesisPage } from './pages/structure.ts';
import { autoRetryDelayMs, h, takeFocusRequest } from './ui.ts';

type Page = (main: HTMLElement, arg: string | undefined) => Promise<void>;

const ROUTES: [RegExp, Page, string][] = [
  [/^\/?$/, overviewPage, 'Overview'],
  [/^\/predictions\/?$/, predictionsPage, 'Active predictions'],
  [/^\/questions\/(.+)$/, questionPage, 'Question'],
  [/^\/sources\/?$/, sourcesPage, 'Sources'],
  [/^\/sources\/(.+)$/, sourcePage, 'Source'],
  [/^\/theses\/?$/, thesesPage, 'Theses'],
  [/^\/theses\/(.+)$/, thesisPage, 'Thesis'],
  [/^\/factors\/?$/, factorsPage, 'Factors'],
  [/^\/scenarios\/?$/, scenariosPage, 'Scenarios'],
  [/^\/scenarios\/(.+)$/, scenarioPage, 'Scenario'],
];

let generation = 0;

async function render(): Promise<void> {
  const main = document.getElementById('app')!;
  const my = ++generation;
  const focus = takeFocusRequest();
  const raw = location.hash.replace(/^#/, '');
  const pathPart = raw.split('?')[0] ?? '';
  const matched = ROUTES.map(([re, page, title]) => ({ m: re.exec(pathPart), page, title })).find((r) => r.m);
  // The id in the path, decoded; a link whose id is not valid percent-encoding (`%E0%A4%A`) names
  // no page: not found (QA: it threw, and the page failed with no heading, "URI malformed").
  const arg = matched?.m![1] === undefined ? undefined : decodedOrNull(matched.m![1]);
  const hit = arg === null ? undefined : matched;
  main.dataset.ready = '0';
  main.setAttribute('aria-busy', 'true');
  const target = h('div', { class: 'page' });
  for (const a of document.querySelectorAll<HTMLAnchorElement>('header nav.pages a')) {
    const href = a.getAttribute('href') ?? '';
    const section = href.replace(/^#/, '').split('/')[1] ?? '';
    const current = pathPart.replace(/^\//, '').split('/')[0] ?? '';
    if (section === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  try {
    if (!hit) {
      document.title = 'Not found · Quorum';
      target.append(h('h1', {}, 'Not found'), h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Back to the overview')));
    } else {
      document.title = `${hit.title} · Quorum`;
      await hit.page(target, arg ?? undefined);
    }
  } catch (err) {
    target.append(h('p', { class: 'notice error', role: 'alert' }, `This page failed: ${(err as Error).message}`));
  }
  if (my !== generation) return; // a newer navigation took over
  // A page of one question, thesis or source is named by it, as its heading names it (QA: every
  // question's tab, history entry and bookmark read "Question · Quorum", the same for all).
  const heading = target.querySelector('h1')?.textContent?.trim();
  if (hit && arg && heading) document.title = `${heading} · Quorum`;
  main.replaceChildren(target);
  main.setAttribute('aria-busy', 'false');
  main.dataset.ready = '1';
  // A control (select, button, sort or pager link) led here: focus goes back to it, or to the
  // new page's table, instead of falling to <body> with the page it was on.
  const el = focus ? document.getElementById(focus.id) : null;
  if (el && focus) {
    el.focus({ preventScroll: focus.scroll });
    if (focus.scroll) el.scrollIntoView({ block: 'start' });
  }
  performance.mark('quorum:rendered');
  // Panels a not-yet-ready server (or a per-minute limit) asked to wait a few seconds: the page
  // loads again after that wait, unless the reader went elsewhere meanwhile.
  const wait = autoRetryDelayMs(target);
  if (wait !== null) setTimeout(() => { if (my === generation) void render(); }, wait);
}

/** `s` percent-decoded, or null when it is not valid percent-encoding. */
function decodedOrNull(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

function keyForm(): void {
  const slot = document.getElementById('key-slot');
  if (!slot) return;
  const details = h('details', { class: 'key' });
  const input = h('input', { type: 'password', id: 'api-key', name: 'api-key', autocomplete: 'off', placeholder: 'qrm_…', value: apiKey() ?? '' });
  const status = h('span', { class: 'key-status', 'aria-live': 'polite' });
  const save = h('button', { type: 'submit' }, 'Use key');
  const clear = h('button', { type: 'button' }, 'Forget');
  const form = h('form', {}, h('label', { for: 'api-key' }, 'API key '), input, save, clear, status);
  details.append(h('summary', {}, 'API key'), form);
  slot.replaceChildren(details);
  const say = (check: KeyCheck): void => {
    status.textContent = check.kind === 'anonymous' ? (routesConfig().publicBeta ? ' anonymous (public beta)' : ' anonymous (no public beta here: a key is needed)')
      : check.kind === 'plan' ? ` plan: ${check.plan}`
        : check.kind === 'refused' ? ' key refused'
          : ` key not checked: ${check.status === null ? 'the server could not be reached' : `${check.message} (HTTP ${check.status})`}`;
  };
  const showPlan = async () => say(await keyCheck());
  // every check's answer, whichever page asked (a key not checked is asked again by the next one)
  window.addEventListener(KEY_CHECKED_EVENT, (e) => say((e as CustomEvent<KeyCheck>).detail));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    setApiKey(input.value.trim() || null);
    void showPlan().then(render);
  });
  clear.addEventListener('click', () => {
    input.value = '';
    setApiKey(null);
    void showPlan().then(render);
  });
  void showPlan();
}

/**
 * The skip link, the first Tab stop: past the header's links to the page. The router owns the
 * hash, so the link moves focus itself rather than navigating to #app (which would route to "Not
 * found"); <main> takes focus from script only (tabindex -1), not from Tab.
 */
function skipLink(): void {
  const main = document.getElementById('app');
  if (!main) return;
  main.setAttribute('tabindex', '-1');
  const link = h('a', { class: 'skip-link', href: '#app' }, 'Skip to the main content');
  link.addEventListener('click', (e) => {
    e.preventDefault();
    main.focus();
  });
  document.body.prepend(link);
}

window.addEventListener('hashchange', () => void render());
skipLink();
keyForm();
void render();
