import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify, parseTaxonomy, TaxonomyError, getDefaultTaxonomy } from '../../pipeline/taxonomy/classify.ts';
import { CATEGORIES, DOMAINS } from '../../pipeline/warehouse/tables.ts';

const SAMPLE = join(import.meta.dirname, '../../data/sample/forecastbench/questions_market.jsonl');
const TAXONOMY = join(import.meta.dirname, '../../data/taxonomy.json');

/** Distinct questions of the sample, latest round's text last (so it wins). */
function sampleQuestions() {
  const byId = new Map<string, { title: string; description: string; resolution_criteria: string; venue: string; url: string }>();
  for (const line of readFileSync(SAMPLE, 'utf8').trim().split('\n')) {
    const r = JSON.parse(line);
    byId.set(`${r.source}:${r.id}`, {
      title: r.question,
      description: r.background,
      resolution_criteria: r.resolution_criteria,
      venue: r.source,
      url: r.url,
    });
  }
  return byId;
}

const questions = sampleQuestions();

// Real question texts from data/sample/forecastbench/questions_market.jsonl, by venue-qualified id
// (Polymarket condition ids abbreviated to a unique prefix).
const CASES: [id: string, category: string, domain: string][] = [
  // sports
  ['manifold:K8qazyZJ3tXyuLlzkkyk', 'sports', 'other'], // San Diego FC playoffs
  ['polymarket:0x1d395b8de', 'sports', 'other'], // Kansas City Chiefs win Super Bowl 2026
  ['metaculus:21829', 'sports', 'other'], // MLB pitcher Cy Young
  ['polymarket:0xa998022ef', 'sports', 'other'], // Carolina Hurricanes (not climate)
  ['manifold:zOSd5nE56c', 'sports', 'other'], // Iran at the FIFA World Cup
  // economics / central banks / rates
  ['polymarket:0x4914bfdd8', 'economics', 'central-banks'], // 6 Fed rate cuts in 2026
  ['polymarket:0x36e8ca24d', 'economics', 'central-banks'], // no change in Fed interest rates
  ['polymarket:0xb2e1fde8d', 'economics', 'central-banks'], // Bank of England 25 bps
  ['metaculus:8968', 'economics', 'central-banks'], // Fed negative policy rate
  ['polymarket:0x1bed9a770', 'economics', 'macro'], // inflation > 4%
  ['manifold:f2i3zt28mm', 'economics', 'macro'], // US recession
  ['infer:1707', 'economics', 'macro'], // China GDP growth
  ['manifold:tcnaai25qi', 'economics', 'trade'], // US tariffs
  ['metaculus:34504', 'economics', 'trade'], // customs duties revenue
  ['metaculus:24819', 'economics', 'trade'], // USMCA review
  // crypto
  ['polymarket:0x84c7382fc', 'crypto', 'crypto'], // Bitcoin dip to $55,000
  ['polymarket:0x6c5693069', 'crypto', 'crypto'], // Ethereum $2,600
  ['polymarket:0xf74795c44', 'crypto', 'crypto'], // Solana $140
  ['metaculus:36871', 'crypto', 'crypto'], // USDT & USDC stablecoins
  ['metaculus:35573', 'crypto', 'crypto'], // ¿Cerrará Bitcoin el 2025 ...?
  // finance
  ['polymarket:0x246559691', 'finance', 'commodities'], // Gold (GC) $5,500
  ['manifold:PLS9ZCLzth', 'finance', 'commodities'], // Brent oil $120
  ['manifold:Og5u9CudhA', 'finance', 'other'], // TSLA below $200
  ['metaculus:7481', 'finance', 'other'], // S&P 500 ±15% day
  ['manifold:NII0slqg2N', 'finance', 'other'], // OpenAI IPO
  ['metaculus:37157', 'finance', 'macro'], // US Dollar Index (DXY)
  // tech
  ['polymarket:0xad5642932', 'tech', 'other'], // OpenAI top AI model
  ['polymarket:0x0b8382c3f', 'tech', 'other'], // Claude 5 released
  ['manifold:7GiChhJx1lJx0', 'tech', 'other'], // Apple iPhone replaceable battery
  ['infer:1555', 'tech', 'other'], // US AI legislation
  ['manifold:ccugdghNgy', 'tech', 'other'], // Nvidia Blackwell chips to China
  // politics
  ['polymarket:0x3265b10da', 'politics', 'policy'], // Walz 2028 Democratic nomination
  ['polymarket:0x650e3ebc0', 'politics', 'policy'], // Republicans win Ohio governor
  ['metaculus:11045', 'politics', 'policy'], // Democrat wins 2028 presidential election
  ['polymarket:0x1480b819d', 'politics', 'policy'], // next PM of Hungary
  ['metaculus:29846', 'politics', 'policy'], // ACA repealed
  // world
  ['manifold:wENpa5mETtrCn', 'world', 'other'], // China invades Taiwan
  ['polymarket:0xb23587fc1', 'world', 'other'], // Russia captures Kostyantynivka
  ['metaculus:41138', 'world', 'other'], // Russo-Ukrainian ceasefire
  ['metaculus:7861', 'world', 'policy'], // China recognizes the Islamic Emirate
  ['infer:1680', 'world', 'other'], // RSF retakes Khartoum
  ['polymarket:0xfccc16f3b', 'world', 'other'], // Bad Bunny top Spotify artist (culture → world)
  // climate
  ['polymarket:0xe6508d867', 'climate', 'other'], // 2025 hottest year
  ['metaculus:39771', 'climate', 'other'], // hurricane stronger than Erin
  ['infer:1723', 'climate', 'other'], // Arctic sea ice
  ['manifold:6uQmk7jqqcG4g', 'climate', 'other'], // global CO2 emissions
  // science
  ['manifold:cb4s0TO4eh4ex', 'science', 'other'], // walk on Mars
  ['manifold:ILztIIlPyl', 'science', 'other'], // Artemis II
  ['metaculus:20709', 'science', 'other'], // FDA-approved cure for Type 1 diabetes
  ['polymarket:0x7ffa1fcfa', 'science', 'other'], // new pandemic
  ['metaculus:6948', 'science', 'other'], // lepton universality
];

/** Resolves an id prefix (polymarket ids are long) to the full id in the sample. */
function resolveId(prefix: string): string {
  const hits = [...questions.keys()].filter((k) => k.startsWith(prefix));
  if (hits.length !== 1) throw new Error(`${prefix}: ${hits.length} matches`);
  return hits[0]!;
}

describe('classify on real ForecastBench questions', () => {
  const cases = CASES;

  it('has at least 30 hand-checked cases', () => expect(cases.length).toBeGreaterThanOrEqual(30));

  it.each(cases)('%s → %s / %s', (prefix, category, domain) => {
    const q = questions.get(resolveId(prefix))!;
    const c = classify(q);
    expect({ title: q.title, category: c.category, domain: c.domain }).toEqual({ title: q.title, category, domain });
    expect(c.tags.length).toBeGreaterThan(0);
  });

  it('gives every one of the 480 questions a valid category and domain, all nine categories used', () => {
    expect(questions.size).toBe(480);
    const used = new Set<string>();
    for (const q of questions.values()) {
      const c = classify(q);
      expect(CATEGORIES).toContain(c.category);
      expect(DOMAINS).toContain(c.domain);
      expect(new Set(c.tags).size).toBe(c.tags.length);
      used.add(c.category);
    }
    expect([...used].sort()).toEqual([...CATEGORIES].sort());
  });

  it('is deterministic', () => {
    for (const q of questions.values()) expect(classify({ ...q })).toEqual(classify(q));
  });
});

describe('classify rules', () => {
  it('defaults to world/other with no tags when nothing matches', () => {
    expect(classify({ title: 'Will the old baobab tree die by 2027?' })).toEqual({ category: 'world', domain: 'other', tags: [] });
  });

  it('matches whole words only and ignores URLs', () => {
    expect(classify({ title: 'Will the federation grow?' }).category).toBe('world'); // not "Fed"
    expect(classify({ title: 'Is it fed?', description: 'see https://example.com/bitcoin-nba' }).tags).toEqual([]);
  });

  it('weighs the title above the description', () => {
    const c = classify({ title: 'Will Bitcoin reach $100k?', description: 'Background: the NBA season and elections.' });
    expect(c.category).toBe('crypto');
  });

  it('breaks score ties by rule order in the file', () => {
    const tax = parseTaxonomy(
      {
        version: 1,
        default: { category: 'world', domain: 'other' },
        fieldWeights: { title: 1, description: 1, resolution_criteria: 1 },
        rules: [
          { name: 'b', category: 'tech', domain: 'other', weight: 1, patterns: ['beta'] },
          { name: 'a', category: 'science', domain: 'other', weight: 1, patterns: ['alpha'] },
        ],
      },
      'inline',
    );
    expect(classify({ title: 'alpha beta' }, tax)).toEqual({ category: 'tech', domain: 'other', tags: ['b', 'a'] });
  });
});

describe('taxonomy file validation', () => {
  const good = JSON.parse(readFileSync(TAXONOMY, 'utf8'));

  it('the bundled file is valid', () => {
    expect(getDefaultTaxonomy().rules.length).toBeGreaterThan(10);
  });

  it('rejects an unknown category with a clear error', () => {
    const bad = structuredClone(good);
    bad.rules[0].category = 'entertainment';
    expect(() => parseTaxonomy(bad, 'bad.json')).toThrow(TaxonomyError);
    expect(() => parseTaxonomy(bad, 'bad.json')).toThrow(/bad\.json[\s\S]*rules\[0\]\.category|rules.0.category/);
  });

  it('rejects an invalid regex, naming the rule and pattern', () => {
    const bad = structuredClone(good);
    bad.rules[1].patterns = ['(unclosed'];
    expect(() => parseTaxonomy(bad, 'bad.json')).toThrow(/bad\.json: rules\[1\] "fed-acronym" patterns\[0\]/);
  });

  it('rejects duplicate rule names and missing fields', () => {
    const dup = structuredClone(good);
    dup.rules.push(dup.rules[0]);
    expect(() => parseTaxonomy(dup, 'dup.json')).toThrow(/duplicate rule name "fed"/);
    const missing = structuredClone(good);
    delete missing.default;
    expect(() => parseTaxonomy(missing, 'missing.json')).toThrow(TaxonomyError);
  });
});

// Venue-style titles (QA). Shapes of real Polymarket/Kalshi titles (Polymarket's "Fed decision in
// December?" event, Kalshi's all-caps series headers such as "FED DECISION").
describe('classify on venue-style titles', () => {
  it('reads an all-caps title as the same title in mixed case (QA: "FED" matched no rule, world/other)', () => {
    for (const title of ['FED DECISION IN DECEMBER?', 'WILL THE FED CUT RATES IN 2026?']) {
      const c = classify({ title });
      expect({ title, category: c.category, domain: c.domain }).toEqual({ title, category: 'economics', domain: 'central-banks' });
    }
    // the verb stays out: only the all-caps acronym is added, not lower-case "fed"
    expect(classify({ title: 'Will the cattle be fed grass?' }).tags).not.toContain('fed-acronym');
  });
});

describe('classify: team names that are also common words', () => {
  it('"Joint Chiefs" and "lightning" are no sports teams (QA: both were sports/other); the teams still are', () => {
    expect(classify({ title: 'Will the Chairman of the Joint Chiefs of Staff be fired in 2026?' }).category).not.toBe('sports');
    expect(classify({ title: 'Will lightning strike the Statue of Liberty in 2026?' }).category).not.toBe('sports');
    expect(classify({ title: 'Will the F-35 Lightning II enter service in India?' }).category).not.toBe('sports');
    expect(classify({ title: 'Chiefs vs. Bills: who wins?' }).category).toBe('sports');
    expect(classify({ title: 'Lightning vs. Panthers: who wins?' }).category).toBe('sports');
  });
});

describe('classify: rate decisions of central banks beyond the Fed, ECB, BoE, BoJ and PBoC', () => {
  // Titles in the shape of Polymarket's and Kalshi's monthly rate-decision markets.
  it.each([
    ['Bank of Canada decision in December?', 'central-banks'],
    ['Will the RBA cut rates in December?', 'central-banks'],
    ['Will the Reserve Bank of Australia raise rates in 2026?', 'central-banks'],
    ['Will the Reserve Bank of India cut the repo rate?', 'central-banks'],
    ['Will the Swiss National Bank go negative?', 'central-banks'],
    ['Will the RBNZ cut rates by 50 bps?', 'central-banks'],
    ['Will the Bank of Korea hold in November?', 'central-banks'],
    ['Will 30-year mortgage rates fall below 6% in 2026?', 'rates'],
  ])('%s → economics / %s (QA: world/other, RBNZ economics/rates)', (title, domain) => {
    const c = classify({ title });
    expect({ category: c.category, domain: c.domain }).toEqual({ category: 'economics', domain });
  });
});

describe('classify: weather markets', () => {
  // Kalshi's weather series (highest temperature, rain, snow in a city; tornado counts): a
  // temperature market was climate, a rain or snow market of the same city world/other.
  it.each([
    'Highest temperature in NYC on November 28?',
    'Will it rain in NYC today?',
    'Will Houston get more than 2 inches of rain in November?',
    'How much snow will fall in Denver in December?',
    'Will Chicago see more than 10 inches of snowfall in January?',
    'Will there be more than 1,200 tornadoes in the US in 2026?',
  ])('%s → climate (QA: rain, snow and tornado markets were world/other)', (title) => {
    expect(classify({ title }).category).toBe('climate');
  });

  it('no weather inside other words or names', () => {
    expect(classify({ title: 'Will Ukraine join NATO?' }).tags).not.toContain('climate');
    expect(classify({ title: 'Will Snow White gross $100M at the box office?' }).category).toBe('world');
    expect(classify({ title: 'Will Jon Snowden be elected?' }).tags).not.toContain('climate');
  });
});

describe('classify: HTML character references', () => {
  // INFER's backgrounds are HTML ("S&amp;P CoreLogic Case-Shiller", "Johnson &amp; Johnson",
  // "&nbsp;" in data/sample/forecastbench/questions_market.jsonl, infer:1645, infer:1615); Metaculus
  // markdown carries "&#x20;". The text is matched as it reads, not as it is escaped.
  it('matches "S&amp;P 500" as "S&P 500" (QA: the escaped form matched no rule)', () => {
    expect(classify({ title: 'Will the S&amp;P 500 close above 7,000 in 2026?' }).category).toBe('finance');
    expect(classify({ title: 'Will the index rise?', description: 'The S&#38;P&nbsp;500 closed at 6,000.' }).tags).toContain('equities');
    expect(classify({ title: 'Will the index rise?', description: 'The S&#x26;P 500 closed at 6,000.' }).tags).toContain('equities');
  });

  it('still finds the words between references', () => {
    expect(classify({ title: 'Will &lt;AI&gt; pass the Turing test?' }).tags).toContain('ai-acronyms');
    expect(classify({ title: 'Will the &amp;quot;Fed&amp;quot; hold?' }).tags).toContain('fed-acronym');
  });
});

describe('classify: elections named in other languages', () => {
  // Metaculus and Manifold list Spanish and Portuguese questions (the sample has "¿Cerrará Bitcoin
  // el 2025 …?" and "O Brasil melhorará …?"); an election question in those words was world/other.
  it.each([
    '¿Ganará Lula las elecciones de Brasil en 2026?',
    '¿Quién ganará la elección presidencial de Chile?',
    'Élection présidentielle française 2027 : qui gagnera ?',
    'Quem vencerá as eleições presidenciais de 2026?',
    'Wer gewinnt die Bundestagswahl 2029?',
    'Wer gewinnt die Landtagswahl in Bayern?',
  ])('%s → politics / policy (QA: world/other)', (title) => {
    const c = classify({ title });
    expect({ category: c.category, domain: c.domain }).toEqual({ category: 'politics', domain: 'policy' });
  });
});

describe('classify: sports markets by team, player or event name alone', () => {
  // Polymarket's game markets ("Knicks vs. Heat") and props name only teams or players; the
  // teams list held a few dozen, tuned on the sample, so most games were world/other.
  it.each([
    'Knicks vs. Heat',
    'Packers vs. Steelers: who wins?',
    'Will the Dodgers beat the Mets tonight?',
    'Will the Oilers beat the Maple Leafs?',
    'Real Madrid vs. Barcelona: who wins El Clásico?',
    'Will Shohei Ohtani hit 50 home runs in 2026?',
    'Will Djokovic win the Australian Open?',
    'Will Carlos Alcaraz win Roland Garros 2026?',
    'Will Josh Allen throw 3+ touchdowns on Sunday?',
    'Will LeBron James retire after this season?',
  ])('%s → sports (QA: world/other)', (title) => {
    expect(classify({ title }).category).toBe('sports');
  });

  it('leaves the ordinary senses alone: bills, chargers, dolphins, Texans', () => {
    expect(classify({ title: 'Will EV chargers outnumber gas stations?' }).category).not.toBe('sports');
    expect(classify({ title: 'Will Texans vote for the bond measure?' }).category).not.toBe('sports');
  });
});

describe('classify: crypto price brackets of coins beyond BTC, ETH and SOL', () => {
  // Polymarket's and Kalshi's daily/monthly price markets list many coins by name or ticker.
  it.each([
    'Avalanche (AVAX) above $40 on December 31?',
    'Will Cardano reach $1 in 2026?',
    'Will Chainlink hit $30?',
    'Will BNB hit $1,000?',
    'Will Litecoin be above $100 on Friday?',
    'Will Hyperliquid be above $50?',
    'Will FTX customers be repaid in full?',
  ])('%s → crypto (QA: world/other, AVAX sports)', (title) => {
    expect(classify({ title }).category).toBe('crypto');
  });
});

describe('classify: typographic apostrophes', () => {
  // Metaculus and INFER texts use U+2019 (91 lines of the bundled sample have one); the rules write
  // the ASCII apostrophe ("People's Bank of China", "Alzheimer's").
  it('reads ’ as \' (QA: "People’s Bank of China" was world/other, "Alzheimer’s" matched nothing)', () => {
    const c = classify({ title: 'Will the People’s Bank of China cut rates in 2026?' });
    expect({ category: c.category, domain: c.domain }).toEqual({ category: 'economics', domain: 'central-banks' });
    expect(classify({ title: 'Will an Alzheimer’s drug be approved in 2026?' }).tags).toContain('health');
    expect(classify({ title: 'Will an Alzheimer‘s drug be approved in 2026?' }).tags).toContain('health');
  });
});
