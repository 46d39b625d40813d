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
 */

export interface SimulatedAnswer {
  probability: number;
  reasoning: string;
  key_factors: string[];
}

/** What the simulator reads from a prompt. */
export interface PromptFeatures {
  question: string;
  marketProbability: number | null;
  evidenceCount: number;
  evidenceDigest: string;
}

const QUESTION_RE = /^Question: (.*)$/m;
const MARKET_RE = /^Current market probability of YES: (\d+(?:\.\d+)?)%/m;
const EVIDENCE_RE = /^\[(\d+)\] (.*)$/gm;

export function readPrompt(prompt: string): PromptFeatures {
  const q = QUESTION_RE.exec(prompt);
  const m = MARKET_RE.exec(prompt);
  const evidence = [...prompt.matchAll(EVIDENCE_RE)].map((x) => x[2] ?? '');
  const market = m ? Number(m[1]) / 100 : null;
  return {
    question: (q?.[1] ?? prompt).trim(),
    marketProbability: market !== null && market >= 0 && market <= 1 ? market : null,
    evidenceCount: evidence.length,
    evidenceDigest: evidence.join('\n'),
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
  const p = clamp(Math.round(sigmoid(slope * logOdds + bias + noise) * 1000) / 1000, 0.01, 0.99);

  const parts = [`Simulated forecast from the Quorum model simulator (model ${model}); not a real model's judgement.`];
  parts.push('It starts from a base rate derived deterministically from the question text');
  const factors = ['simulated answer (no real model)'];
  if (f.marketProbability !== null) {
    parts[1] += `, shrunk strongly toward the market probability of ${(f.marketProbability * 100).toFixed(1)}%`;
    factors.push(`market probability ${(f.marketProbability * 100).toFixed(1)}%`);
  } else {
    factors.push('no market information');
  }
  if (f.evidenceCount > 0) {
    const cites = Array.from({ length: Math.min(f.evidenceCount, 3) }, (_, i) => `[${i + 1}]`).join(', ');
    parts[1] += `, with a small adjustment for the ${f.evidenceCount} evidence item(s) ${cites}`;
    factors.push(`${f.evidenceCount} evidence item(s)`);
  }
  parts[1] += `, giving ${(p * 100).toFixed(1)}%.`;
  factors.push(p >= 0.5 ? 'leans YES' : 'leans NO');
  return { probability: p, reasoning: parts.join(' '), key_factors: factors };
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
