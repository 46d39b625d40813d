/**
 * `npm run bench -- sync [markets=10000] [--venue=polymarket|manifold] [--rounds=9]`
 *
 * Syncs N generated markets of the venue's real Gamma/Manifold shape from a loopback replay server
 * (pages of the venue's usual size: Polymarket 100, Manifold 1000) with the project's adapter,
 * against fetching the same page URLs sequentially with bare `fetch` + `JSON.parse`, in the same
 * process. ratio = project / bare (requirement: ≤ 2). After a warm-up, each round runs bare then
 * project back to back; ratio is the median of the per-round ratios (robust to load drifting on a
 * shared machine), project_ms / bare_ms the medians of each side.
 *
 * The baseline is the issue's: bare `fetch` + `JSON.parse`. The project's client
 * (pipeline/sources/http-client.ts) talks HTTP through undici's `request` API, which costs about
 * half the CPU of fetch per page; that saving is part of what the ratio measures.
 *
 * The adapter's rate limit is LIFTED for the benchmark (clientOptions.requestsPerInterval = 1e9,
 * concurrency 1) so it measures the code, not the deliberate sleep of the production rate limit.
 *
 * Two scenarios, both run and both reported on the last line:
 *  - `ratio_tracked`: the markets are already tracked — the steady state of a 4-hourly sync,
 *    where every market is fetched, validated, normalized and priced;
 *  - `ratio_new`: every market is a NEW question, which adds the taxonomy classifier
 *    (pipeline/taxonomy/classify.ts) and the question and lifecycle rows once per market;
 *    `classify_ms` is that classifier alone on the same texts.
 * The headline `ratio` is the worse of the two.
 */
import { pino } from 'pino';
import { startReplayServer, type ScriptedResponse } from '../test/helpers/replay-server.ts';
import { createManifoldAdapter } from '../pipeline/venues/manifold.ts';
import { createPolymarketAdapter } from '../pipeline/venues/polymarket.ts';
import type { VenueAdapter, VenueSyncContext } from '../pipeline/venues/types.ts';
import { classify } from '../pipeline/taxonomy/classify.ts';

const TOPICS = [
  ['Fed decreases interest rates by 25 bps after the {m} meeting?', 'The FED interest rates are defined in this market by the upper bound of the target federal funds range. This market will resolve to "Yes" if the upper bound is decreased by 25 basis points at the {m} meeting. Otherwise, this market will resolve to "No". The resolution source is the FOMC statement.'],
  ['Will Bitcoin reach ${n} by {m}?', 'This market will resolve to "Yes" if any Binance 1 minute candle for BTC/USDT between market creation and {m} 11:59 PM ET has a final "High" price of ${n} or higher. Otherwise, this market will resolve to "No". Prices from other exchanges or pairs are not considered.'],
  ['Will the {t} win the 2026 championship?', 'This market will resolve to "Yes" if the {t} win the 2026 championship. Otherwise, this market will resolve to "No". If the season is cancelled or not completed by the end of 2026 this market will resolve to "No". The resolution source is the official league website.'],
  ['Will {p} win the {m} election?', 'This market will resolve to "Yes" if {p} is declared the winner of the {m} election by official sources. Otherwise, this market will resolve to "No". The resolution source will be a consensus of credible reporting and the official certified results.'],
];
const FILL = { m: ['March 2026', 'June 2026', 'September 2026', 'December 2026'], n: ['120,000', '150,000', '200,000'], t: ['Lakers', 'Celtics', 'Yankees', 'Chiefs', 'Arsenal'], p: ['Alice Moreau', 'Jan de Vries', 'Maria Silva', 'Tom Becker'] };
const fill = (s: string, i: number) =>
  s.replace(/\{(\w)\}/g, (_, k: keyof typeof FILL) => FILL[k][i % FILL[k].length]!).replace(/\$\{n\}/g, `$${FILL.n[i % 3]}`);

export function polymarket(i: number): Record<string, unknown> {
  const [q, d] = TOPICS[i % TOPICS.length]!;
  const yes = Math.round(((i * 7919) % 997) / 997 * 1000) / 1000;
  const yesFirst = i % 5 !== 0;
  const outcomes = yesFirst ? ['Yes', 'No'] : ['No', 'Yes'];
  const prices = yesFirst ? [String(yes), String(Math.round((1 - yes) * 1000) / 1000)] : [String(Math.round((1 - yes) * 1000) / 1000), String(yes)];
  const slug = `${fill(q, i).toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${i}`;
  return {
    id: String(500000 + i),
    question: `${fill(q, i)} (#${i})`,
    conditionId: `0x${i.toString(16).padStart(64, '0')}`,
    slug,
    resolutionSource: '',
    endDate: `2026-${String((i % 12) + 1).padStart(2, '0')}-28T12:00:00Z`,
    liquidity: String(1000 + (i % 50_000)),
    startDate: '2025-06-02T17:45:06.519Z',
    image: `https://polymarket-upload.s3.us-east-2.amazonaws.com/${slug}.png`,
    icon: `https://polymarket-upload.s3.us-east-2.amazonaws.com/${slug}.png`,
    description: fill(d, i),
    outcomes: JSON.stringify(outcomes),
    outcomePrices: JSON.stringify(prices),
    volume: String(10000 + i * 13.5),
    active: true,
    closed: false,
    marketMakerAddress: '',
    createdAt: '2025-06-02T16:12:44.211355Z',
    updatedAt: '2025-10-30T08:14:51.90114Z',
    new: false,
    featured: false,
    submitted_by: '0x91430CaD2d3975766499717fA0D66A78D814E5c5',
    archived: false,
    resolvedBy: '0x6A9D222616C90FcA5754cd1333cFD9b7fb6a4F74',
    restricted: true,
    groupItemTitle: '',
    questionID: `0x${(i * 31).toString(16).padStart(64, 'b')}`,
    enableOrderBook: true,
    orderPriceMinTickSize: 0.001,
    orderMinSize: 5,
    volumeNum: 10000 + i * 13.5,
    liquidityNum: 1000 + (i % 50_000),
    endDateIso: `2026-${String((i % 12) + 1).padStart(2, '0')}-28`,
    startDateIso: '2025-06-02',
    volume24hr: 1023.1,
    clobTokenIds: JSON.stringify([`${71321045679252212594626385532706912750332728571942532289631379312455583n + BigInt(i)}`, `${1032145679252212594626385532706912750332728571942532289631379312455583n + BigInt(i)}`]),
    umaBond: '500',
    umaReward: '5',
    acceptingOrders: true,
    negRisk: false,
    events: [{ id: String(16000 + i), ticker: slug, slug, title: fill(q, i), active: true, closed: false }],
    competitive: 0.91,
    spread: 0.01,
    oneDayPriceChange: -0.005,
    lastTradePrice: yes,
    bestBid: Math.max(0, Number(prices[0]) - 0.005),
    bestAsk: Math.min(1, Number(prices[0]) + 0.005),
    umaResolutionStatuses: '[]',
  };
}

export function manifold(i: number): Record<string, unknown> {
  const [q] = TOPICS[i % TOPICS.length]!;
  const slug = `${fill(q, i).toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${i}`;
  return {
    id: `mkt${i.toString(36).padStart(8, '0')}`,
    creatorId: 'ppBcTSDvgIYmn2ULMz9QCfP0ADx1',
    creatorUsername: 'ManifoldPolitics',
    creatorName: 'Manifold Politics',
    createdTime: 1754000000000 - i * 60_000,
    creatorAvatarUrl: 'https://firebasestorage.googleapis.com/v0/b/mantic-markets.appspot.com/o/user-images%2Fdefault.png',
    closeTime: 1798761599000,
    question: `${fill(q, i)} (#${i})`,
    slug,
    url: `https://manifold.markets/ManifoldPolitics/${slug}`,
    pool: { NO: 1432.12, YES: 2211.4 },
    probability: ((i * 7919) % 997) / 997,
    p: 0.5,
    totalLiquidity: 1500,
    outcomeType: 'BINARY',
    mechanism: 'cpmm-1',
    volume: 24511.7,
    volume24Hours: 312.1,
    isResolved: false,
    uniqueBettorCount: 87,
    lastUpdatedTime: 1754000000000,
    lastBetTime: 1754000000000,
    token: 'MANA',
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export default async function bench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 10_000);
  const venue = (args.find((a) => a.startsWith('--venue='))?.slice(8) ?? 'polymarket') as 'polymarket' | 'manifold';
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 9);
  const pageSize = venue === 'polymarket' ? 100 : 1000;

  // Pre-serialized pages, keyed by the query that selects them.
  const gen = venue === 'polymarket' ? polymarket : manifold;
  const markets = Array.from({ length: n }, (_, i) => gen(i));
  const pages: Buffer[] = [];
  for (let i = 0; i < n; i += pageSize) pages.push(Buffer.from(JSON.stringify(markets.slice(i, i + pageSize))));
  if (n % pageSize === 0) pages.push(Buffer.from('[]'));
  const byKey = new Map<string, number>();
  if (venue === 'manifold') pages.forEach((_, k) => byKey.set(k === 0 ? '' : String(markets[k * pageSize - 1]!.id), k));

  const server = await startReplayServer([
    {
      path: venue === 'polymarket' ? '/markets' : '/v0/markets',
      responses: (req): ScriptedResponse => {
        const k = venue === 'polymarket' ? Number(req.query.get('offset') ?? 0) / pageSize : byKey.get(req.query.get('before') ?? '') ?? pages.length;
        return { body: pages[k] ?? Buffer.from('[]') };
      },
    },
  ]);
  try {
    const lifted = { requestsPerInterval: 1_000_000_000, intervalMs: 1000, concurrency: 1, retries: 0, timeoutMs: 60_000 };
    const adapter: VenueAdapter =
      venue === 'polymarket'
        ? createPolymarketAdapter({ gammaUrl: server.url, pageSize, maxPages: 1_000_000, clientOptions: lifted })
        : createManifoldAdapter({ baseUrl: `${server.url}/v0`, pageSize, maxPages: 1_000_000, clientOptions: lifted });
    const idOf = (m: Record<string, unknown>) => String(venue === 'polymarket' ? m.conditionId : m.id);
    const scenario = async (allNew: boolean) => {
      const ctx: VenueSyncContext = {
        now: new Date('2025-11-15T12:00:00Z'),
        filters: {},
        tracked: allNew ? [] : markets.map((m) => ({ question_id: `${venue}:${idOf(m)}`, venue_market_id: idOf(m) })),
        logger: pino({ level: 'silent' }),
      };

      // The same page URLs the adapter requested, replayed with bare fetch + JSON.parse.
      let urls: string[] = [];
      const project = async () => {
        const from = server.log.length;
        const t0 = performance.now();
        const r = await adapter.sync(ctx);
        const ms = performance.now() - t0;
        urls = server.log.slice(from).map((e) => `${server.url}${e.url}`);
        const observed = r.market_prices.length;
        if (observed !== n) throw new Error(`bench: expected ${n} price observations, got ${observed} (skipped ${r.skipped.length})`);
        return ms;
      };
      const bare = async () => {
        const t0 = performance.now();
        let count = 0;
        for (const u of urls) {
          const res = await fetch(u, { headers: { accept: 'application/json' } });
          const body = JSON.parse(await res.text()) as unknown[];
          count += body.length;
        }
        if (count !== n) throw new Error(`bench: bare fetch saw ${count} markets`);
        return performance.now() - t0;
      };

      await project(); // warm-up (also records the URLs)
      await bare();
      const p: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < rounds; i++) {
        b.push(await bare());
        p.push(await project());
      }
      return { project_ms: median(p), bare_ms: median(b), ratio: median(p.map((x, i) => x / b[i]!)), pages: urls.length };
    };
    const tracked = await scenario(false);
    const fresh = await scenario(true);
    const ratio = (x: { ratio: number }) => Math.round(x.ratio * 100) / 100;

    // The classifier's share in the new-question scenario, measured alone on the same texts.
    const t0 = performance.now();
    for (const m of markets) classify({ title: String(m.question), description: (m.description as string | undefined) ?? null, resolution_criteria: null, venue, url: null });
    const classify_ms = Math.round(performance.now() - t0);
    return {
      ratio: Math.max(ratio(tracked), ratio(fresh)),
      markets: n,
      venue,
      pages: tracked.pages,
      ratio_tracked: ratio(tracked),
      project_tracked_ms: Math.round(tracked.project_ms),
      bare_tracked_ms: Math.round(tracked.bare_ms),
      ratio_new: ratio(fresh),
      project_new_ms: Math.round(fresh.project_ms),
      bare_new_ms: Math.round(fresh.bare_ms),
      classify_ms,
      rate_limit: 'lifted (bench only)',
    };
  } finally {
    await server.close();
  }
}
