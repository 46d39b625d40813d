/**
 * The simulator's "forecaster": a deterministic function of the model name and the prompt text.
 *
 * It never sees outcomes. From the prompt it reads only the question line, the market probability
 * line (present in informed/augmented prompts) and the evidence items; everything else is hashing:
 * - base log-odds from a hash of the question text (blind);
 * - shrunk strongly toward the market's log-odds when the prompt shows a market price;
 * - a model trait (slope and bias, from a hash of the model name: some models run hotter or
 *   colder than others) and a small per-(model, question, evidence) perturbation, so the models
 *   disagree a little and deterministically.
 * It is how the offline demo and tests exercise the real client path; it is not a forecaster.
 *
 * Conditional prompts (a scenario's components, issue 13) carry lines `- Assume: "<title>" (<id>)
 * resolved YES.`: each assumption moves the log-odds by a coupling drawn from a hash of the
 * (question, assumed question) pair in [−1.5, 1.5], with the sign flipped for NO, so the answers
 * depend on the condition deterministically (and, as a real model's can, need not be coherent).
 *
 * Languages: the prompt names the reasoning language ("(language code: fr)") and, for runs with
 * several languages, the additional ones ("Additional languages: de (German), es (Spanish)."). The
 * simulator writes canned phrases in each (English with a "[xx]" tag for a language it has no
 * phrases for). The probability never depends on the language: it is read from the question, the
 * market line and the evidence only.
 */

export interface SimulatedText {
  reasoning: string;
  key_factors: string[];
}

export interface SimulatedAnswer extends SimulatedText {
  probability: number;
  /** Present only when the prompt asks for additional languages. */
  translations?: Record<string, SimulatedText>;
}

/** What the simulator reads from a prompt. */
export interface PromptFeatures {
  question: string;
  marketProbability: number | null;
  evidenceCount: number;
  evidenceDigest: string;
  /** Language of the reasoning (default "en"). */
  lang: string;
  /** Additional languages asked for under "translations" (in prompt order). */
  extraLangs: string[];
  /** A conditional prompt's assumptions: the assumed question's id and outcome. */
  assumptions: { questionId: string; outcome: 0 | 1 }[];
}

const QUESTION_RE = /^Question: (.*)$/m;
const MARKET_RE = /^Current market probability of YES: (\d+(?:\.\d+)?)%/m;
const EVIDENCE_RE = /^\[(\d+)\] (.*)$/gm;
// The prompt's own lines, each at the start of a line: quoted question text is indented (prompts.ts
// quoted), so a description that says "(language code: fr)" or "- Additional languages: …" is not read.
const LANG_RE = /^- Write the reasoning .*\(language code: ([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)\)/m;
const EXTRA_LANGS_RE = /^- Additional languages: (.*)$/m;
const ASSUME_RE = /^- Assume: ".*" \((\S+)\) resolved (YES|NO)\.$/gm;

export function readPrompt(prompt: string): PromptFeatures {
  const q = QUESTION_RE.exec(prompt);
  const m = MARKET_RE.exec(prompt);
  const evidence = [...prompt.matchAll(EVIDENCE_RE)].map((x) => x[2] ?? '');
  const market = m ? Number(m[1]) / 100 : null;
  const extra = EXTRA_LANGS_RE.exec(prompt)?.[1] ?? '';
  return {
    question: (q?.[1] ?? prompt).trim(),
    marketProbability: market !== null && market >= 0 && market <= 1 ? market : null,
    evidenceCount: evidence.length,
    evidenceDigest: evidence.join('\n'),
    lang: LANG_RE.exec(prompt)?.[1] ?? 'en',
    extraLangs: [...extra.matchAll(/(?:^|,)\s*([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)(?=\s|,|\.|$)/g)].map((x) => x[1]!),
    assumptions: [...prompt.matchAll(ASSUME_RE)].map((x) => ({ questionId: x[1]!, outcome: x[2] === 'YES' ? (1 as const) : (0 as const) })),
  };
}

/** Deterministic answer of `model` to `prompt` (same inputs, same bytes out). */
export function simulateAnswer(model: string, prompt: string): SimulatedAnswer {
  const f = readPrompt(prompt);
  const base = -0.4 + (unit(`q|${f.question}`) - 0.5) * 5; // log-odds in about [-2.9, 2.1]
  const slope = 0.85 + 0.4 * unit(`slope|${model}`); // < 1: hedges, > 1: overconfident
  const bias = (unit(`bias|${model}`) - 0.5) * 0.3;
  const sd = f.marketProbability === null ? 0.45 : 0.2;
  const noise = (unit(`n|${model}|${f.question}|${f.evidenceDigest}`) - 0.5) * 2 * sd;
  let logOdds = base;
  if (f.marketProbability !== null) {
    logOdds = 0.85 * logit(clamp(f.marketProbability, 0.01, 0.99)) + 0.15 * base;
  }
  for (const a of f.assumptions) {
    const coupling = (unit(`c|${f.question}|${a.questionId}`) - 0.5) * 3;
    logOdds += a.outcome === 1 ? coupling : -coupling;
  }
  const p = clamp(Math.round(sigmoid(slope * logOdds + bias + noise) * 1000) / 1000, 0.01, 0.99);

  const facts: Facts = { model, p, market: f.marketProbability, evidence: f.evidenceCount };
  const main = textIn(f.lang, facts);
  const answer: SimulatedAnswer = { probability: p, ...main };
  if (f.extraLangs.length > 0) {
    answer.translations = Object.fromEntries(f.extraLangs.map((l) => [l, textIn(l, facts)]));
  }
  return answer;
}

interface Facts {
  model: string;
  p: number;
  market: number | null;
  evidence: number;
}

interface Phrases {
  intro: (model: string) => string;
  base: string;
  market: (pct: string) => string;
  evidence: (n: number, cites: string) => string;
  giving: (pct: string) => string;
  factors: { simulated: string; market: (pct: string) => string; noMarket: string; evidence: (n: number) => string; yes: string; no: string };
}

/** Canned phrases per language: it is a simulator, not a translator. */
const PHRASES: Record<string, Phrases> = {
  en: {
    intro: (m) => `Simulated forecast from the Quorum model simulator (model ${m}); not a real model's judgement.`,
    base: 'It starts from a base rate derived deterministically from the question text',
    market: (x) => `, shrunk strongly toward the market probability of ${x}`,
    evidence: (n, c) => `, with a small adjustment for the ${n} evidence item(s) ${c}`,
    giving: (x) => `, giving ${x}.`,
    factors: {
      simulated: 'simulated answer (no real model)',
      market: (x) => `market probability ${x}`,
      noMarket: 'no market information',
      evidence: (n) => `${n} evidence item(s)`,
      yes: 'leans YES',
      no: 'leans NO',
    },
  },
  fr: {
    intro: (m) => `Prévision simulée par le simulateur de modèles Quorum (modèle ${m}) ; ce n'est pas le jugement d'un vrai modèle.`,
    base: "Elle part d'un taux de base tiré de façon déterministe du texte de la question",
    market: (x) => `, fortement rapproché de la probabilité du marché de ${x}`,
    evidence: (n, c) => `, avec un petit ajustement pour ${n} élément(s) de preuve ${c}`,
    giving: (x) => `, ce qui donne ${x}.`,
    factors: {
      simulated: 'réponse simulée (aucun vrai modèle)',
      market: (x) => `probabilité du marché ${x}`,
      noMarket: 'aucune information de marché',
      evidence: (n) => `${n} élément(s) de preuve`,
      yes: 'penche vers OUI',
      no: 'penche vers NON',
    },
  },
  de: {
    intro: (m) => `Simulierte Prognose des Quorum-Modellsimulators (Modell ${m}); nicht das Urteil eines echten Modells.`,
    base: 'Sie geht von einer deterministisch aus dem Fragetext abgeleiteten Basisrate aus',
    market: (x) => `, stark zur Marktwahrscheinlichkeit von ${x} hin verschoben`,
    evidence: (n, c) => `, mit einer kleinen Anpassung für ${n} Beleg(e) ${c}`,
    giving: (x) => `, was ${x} ergibt.`,
    factors: {
      simulated: 'simulierte Antwort (kein echtes Modell)',
      market: (x) => `Marktwahrscheinlichkeit ${x}`,
      noMarket: 'keine Marktinformation',
      evidence: (n) => `${n} Beleg(e)`,
      yes: 'tendiert zu JA',
      no: 'tendiert zu NEIN',
    },
  },
  es: {
    intro: (m) => `Pronóstico simulado del simulador de modelos de Quorum (modelo ${m}); no es el juicio de un modelo real.`,
    base: 'Parte de una tasa base derivada de forma determinista del texto de la pregunta',
    market: (x) => `, muy ajustada hacia la probabilidad del mercado de ${x}`,
    evidence: (n, c) => `, con un pequeño ajuste por ${n} elemento(s) de evidencia ${c}`,
    giving: (x) => `, lo que da ${x}.`,
    factors: {
      simulated: 'respuesta simulada (ningún modelo real)',
      market: (x) => `probabilidad del mercado ${x}`,
      noMarket: 'sin información de mercado',
      evidence: (n) => `${n} elemento(s) de evidencia`,
      yes: 'se inclina por SÍ',
      no: 'se inclina por NO',
    },
  },
};

function textIn(lang: string, f: Facts): SimulatedText {
  const base = lang.toLowerCase().split('-')[0]!;
  const ph = PHRASES[base] ?? PHRASES.en!;
  const tag = PHRASES[base] ? '' : `[${lang}] `;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  let sentence = ph.base;
  const factors = [ph.factors.simulated];
  if (f.market !== null) {
    sentence += ph.market(pct(f.market));
    factors.push(ph.factors.market(pct(f.market)));
  } else {
    factors.push(ph.factors.noMarket);
  }
  if (f.evidence > 0) {
    const cites = Array.from({ length: Math.min(f.evidence, 3) }, (_, i) => `[${i + 1}]`).join(', ');
    sentence += ph.evidence(f.evidence, cites);
    factors.push(ph.factors.evidence(f.evidence));
  }
  sentence += ph.giving(pct(f.p));
  factors.push(f.p >= 0.5 ? ph.factors.yes : ph.factors.no);
  return { reasoning: `${tag}${ph.intro(f.model)} ${sentence}`, key_factors: factors.map((x) => `${tag}${x}`) };
}

/** FNV-1a 32-bit hash mapped to [0, 1). Cheap and stable across platforms. */
export function unit(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // one extra avalanche round (murmur3 fmix32) so similar strings spread evenly
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

function logit(p: number): number {
  return Math.log(p / (1 - p));
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
