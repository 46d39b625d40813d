/**
 * Models config: which OpenAI-compatible endpoints answer the forecasts (DESIGN §6).
 *
 * A config file (JSON, see `data/models.example.json`) is used when `QUORUM_MODELS_FILE` (or the
 * `file` option) names one; otherwise the four bundled simulated models are used, all pointing at
 * the local model simulator. API keys are never stored in the file: each model names the
 * environment variable holding its key, and a missing variable is a load error naming it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { modelSourceSlug } from '../claims/slug.ts';
import { baseUrlSchema, headerValueProblem } from '../env.ts';

/** The provider label stored on every forecast and call row of the bundled simulator. */
export const SIMULATED_PROVIDER = 'simulated';

/** The longest delay a Node.js timer holds (2^31 - 1 ms); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/** One model entry as written in the config file. */
export const modelEntrySchema = z
  .object({
    $comment: z.string().optional(),
    /** Stable id stored in the `model` column of forecasts and model_calls, e.g. "gpt-5". */
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, ".", "_" or "-" only'),
    display_name: z.string().min(1),
    /** OpenAI-compatible base URL, usually ending in /v1. */
    // (the OpenAI SDK sends with fetch and appends its paths to it: pipeline/env.ts baseUrlProblem)
    base_url: baseUrlSchema(),
    /** Name of the environment variable that holds the API key (never the key itself). */
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
    /** Model name sent to the endpoint. */
    model: z.string().min(1),
    max_concurrency: z.number().int().min(1).max(1024),
    requests_per_minute: z.number().int().min(1),
    price_in_per_mtok: z.number().min(0),
    price_out_per_mtok: z.number().min(0),
    /** Optional explicit provider label; otherwise derived from the base URL host. */
    provider: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, "_" or "-" only')
      .optional(),
    /**
     * `json_schema` (default): strict structured output. `json_object`: for endpoints that only
     * support JSON mode (the prompt spells out the shape either way; the reply is validated alike).
     */
    response_format: z.enum(['json_schema', 'json_object']).default('json_schema'),
    /** Optional total deadline per call for this model (ms); default the run's `callTimeoutMs` (QUORUM_CALL_TIMEOUT_MS). */
    // At most the longest timer Node.js can set: past it a timer fires after 1 ms (TimeoutOverflowWarning),
    // and every call of the model failed at once as a timeout (QA: a "no limit" of 3000000000).
    timeout_ms: z
      .number()
      .int()
      .min(100)
      .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (24.8 days), the longest timer Node.js can set`)
      .optional(),
    /** Optional output cap, sent as `max_completion_tokens`. */
    max_output_tokens: z.number().int().min(16).optional(),
  })
  .strict();

export const modelsFileSchema = z
  .object({
    $comment: z.string().optional(),
    models: z.array(modelEntrySchema).min(1),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    // By source slug: the same id twice, or two ids apart only in '.', '_' or '-' (gpt-4.1,
    // gpt-4-1), whose forecasts would share one track record (modelSourceSlug; outside test).
    const bySlug = new Map<string, string>();
    cfg.models.forEach((m, i) => {
      const slug = modelSourceSlug(m.id);
      const first = bySlug.get(slug);
      if (first === m.id) {
        ctx.addIssue({ code: 'custom', path: ['models', i, 'id'], message: `duplicate model id "${m.id}"` });
      } else if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['models', i, 'id'], message: `model id "${m.id}" and "${first}" differ only in '.', '_' or '-': their track records would be one source, ${slug}` });
      } else {
        bySlug.set(slug, m.id);
      }
    });
  });

export type ModelEntry = z.infer<typeof modelEntrySchema>;

/** A validated model with its provider label and API key resolved. */
export interface ResolvedModel extends Omit<ModelEntry, '$comment'> {
  provider: string;
  /** The key read from `api_key_env` (a placeholder for the simulator). Never log it. */
  apiKey: string;
}

/** A config problem: the message names the file and the field (or the missing variable). */
export class ModelsConfigError extends Error {
  override name = 'ModelsConfigError';
}

export interface LoadModelsConfigOptions {
  /** Config file; defaults to `env.QUORUM_MODELS_FILE`. */
  file?: string;
  env: NodeJS.ProcessEnv;
  /** Base URL (ending in /v1) of a running model simulator, used when no file is configured. */
  simulatorUrl?: string;
  /** Limits and prices of the simulated models (tests give them a price to exercise budgets). */
  simulator?: SimulatedModelOptions;
}

export interface SimulatedModelOptions {
  /** Calls in flight per simulated model. Default 16. */
  maxConcurrency?: number;
  /** Default 600,000 (no practical cap). */
  requestsPerMinute?: number;
  /** USD per million tokens. Default 0. */
  priceInPerMtok?: number;
  priceOutPerMtok?: number;
}

/**
 * Loads the models: from the config file when one is given, else the four simulated models
 * pointing at `simulatorUrl`. Throws `ModelsConfigError` with a message naming the file and field.
 */
export function loadModelsConfig(opts: LoadModelsConfigOptions): ResolvedModel[] {
  const file = opts.file || opts.env.QUORUM_MODELS_FILE?.trim() || undefined; // trimmed, as loadConfig reads it
  if (file === undefined) {
    if (!opts.simulatorUrl) {
      throw new ModelsConfigError(
        'no models configured: set QUORUM_MODELS_FILE to a models file, or start the model simulator',
      );
    }
    return simulatedModels(opts.simulatorUrl, opts.simulator);
  }
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ModelsConfigError(`models file ${path}: cannot be read (${(err as Error).message})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ModelsConfigError(`models file ${path}: not valid JSON (${withLine((err as Error).message, text)})`);
  }
  const parsed = modelsFileSchema.safeParse(json);
  if (!parsed.success) {
    const lineOf = jsonLines(text);
    const lines = parsed.error.issues.map((i) => {
      // an unknown key is reported at the key itself, a missing one at its entry
      const at = i.code === 'unrecognized_keys' && i.keys[0] ? [...i.path, i.keys[0]] : i.path;
      const line = lineOf(at);
      return `  ${formatPath(at)}${line === null ? '' : ` (line ${line})`}: ${i.message}`;
    });
    throw new ModelsConfigError(`models file ${path}: invalid\n${lines.join('\n')}`);
  }
  return parsed.data.models.map((entry, i) => {
    // Trimmed, and blank is unset, as every variable is read (pipeline/env.ts): a key of spaces was
    // accepted at start, and every call of every run was refused (401) by the provider (QA).
    const apiKey = opts.env[entry.api_key_env]?.trim();
    if (!apiKey) {
      throw new ModelsConfigError(
        `models file ${path}: models[${i}] (${entry.id}): environment variable ${entry.api_key_env} is not set`,
      );
    }
    const keyProblem = headerValueProblem(apiKey);
    if (keyProblem) {
      throw new ModelsConfigError(
        `models file ${path}: models[${i}] (${entry.id}): environment variable ${entry.api_key_env}: ${keyProblem} (value not shown, ${apiKey.length} characters)`,
      );
    }
    const { $comment: _comment, ...rest } = entry;
    return {
      ...rest,
      provider: entry.provider ?? providerFromBaseUrl(entry.base_url, opts.simulatorUrl),
      apiKey,
    };
  });
}

/** The four bundled simulated models, all served by the simulator at `simulatorUrl`. */
export function simulatedModels(simulatorUrl: string, opts: SimulatedModelOptions = {}): ResolvedModel[] {
  const base = {
    base_url: simulatorUrl,
    // a label (the key is fixed, below), not a variable anything reads: pipeline/env.ts does not list it
    api_key_env: 'QUORUM_SIMULATOR_KEY',
    max_concurrency: opts.maxConcurrency ?? 16,
    requests_per_minute: opts.requestsPerMinute ?? 600_000,
    price_in_per_mtok: opts.priceInPerMtok ?? 0,
    price_out_per_mtok: opts.priceOutPerMtok ?? 0,
    provider: SIMULATED_PROVIDER,
    response_format: 'json_schema' as const,
    apiKey: 'simulated',
  };
  return [
    { id: 'sim-gpt', display_name: 'GPT (simulated)', model: 'sim-gpt' },
    { id: 'sim-claude', display_name: 'Claude (simulated)', model: 'sim-claude' },
    { id: 'sim-gemini', display_name: 'Gemini (simulated)', model: 'sim-gemini' },
    { id: 'sim-deepseek', display_name: 'DeepSeek (simulated)', model: 'sim-deepseek' },
  ].map((m) => ({ ...base, ...m }));
}

const KNOWN_HOSTS: [RegExp, string][] = [
  [/(^|\.)openai\.com$/, 'openai'],
  [/(^|\.)openai\.azure\.com$/, 'azure'],
  [/(^|\.)anthropic\.com$/, 'anthropic'],
  [/(^|\.)googleapis\.com$/, 'google'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)x\.ai$/, 'xai'],
  [/(^|\.)mistral\.ai$/, 'mistral'],
  [/(^|\.)openrouter\.ai$/, 'openrouter'],
  [/(^|\.)together\.(xyz|ai)$/, 'together'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)fireworks\.ai$/, 'fireworks'],
];

/**
 * Provider label from a base URL: `simulated` for the simulator's URL, a vendor name for known
 * hosts, `local` for loopback servers (vLLM, Ollama, llama.cpp), else the host's second-level label.
 */
export function providerFromBaseUrl(baseUrl: string, simulatorUrl?: string): string {
  if (simulatorUrl && trimSlash(baseUrl) === trimSlash(simulatorUrl)) return SIMULATED_PROVIDER;
  const host = new URL(baseUrl).hostname.toLowerCase().replace(/^\[|\]$/g, '');
  for (const [re, name] of KNOWN_HOSTS) if (re.test(host)) return name;
  if (host === 'localhost' || host === '::1' || /^127\./.test(host)) return 'local';
  if (/^[\d.]+$/.test(host) || host.includes(':')) return 'local';
  const labels = host.split('.');
  return (labels.length >= 2 ? labels[labels.length - 2]! : labels[0]!).replace(/[^a-z0-9_-]/g, '-');
}

function trimSlash(s: string): string {
  return s.replace(/\/+$/, '');
}

/**
 * Node 20's JSON.parse says where a syntax error is as a character offset ("at position 234"):
 * the line and column are added (Node 22 gives them itself). QA: a trailing comma in a models file
 * of 40 lines was "position 1187", to be counted by hand.
 */
function withLine(message: string, text: string): string {
  const at = /at position (\d+)/.exec(message);
  if (!at || /\bline \d+/.test(message)) return message;
  const before = text.slice(0, Number(at[1])).split('\n');
  return `${message}, line ${before.length} column ${before.at(-1)!.length + 1}`;
}

/**
 * The line of the value at a path of a models file (JSON read as YAML, of which it is a subset,
 * for the positions), or of the nearest enclosing one: a missing field is reported at its entry.
 * QA: a schema error named `models[3].timeout_ms`, no line, in a file of many entries.
 */
function jsonLines(text: string): (path: readonly PropertyKey[]) => number | null {
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument> | null = null;
  try {
    doc = parseDocument(text, { lineCounter, prettyErrors: false });
  } catch {
    doc = null;
  }
  return (path) => {
    if (!doc) return null;
    for (let p = path.filter((k): k is string | number => typeof k !== 'symbol'); ; p = p.slice(0, -1)) {
      const node = p.length === 0 ? doc.contents : doc.getIn(p, true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return lineCounter.linePos(range[0]).line;
      if (p.length === 0) return null;
    }
  };
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

/**
 * USD to 9 decimals (a nano-dollar, finer than any price per token): tokens × price / 1e6, and the
 * sums of such costs, carry binary noise (QA: 0.00012502000000000002, 0.031170000000000003). Every
 * call row's cost (the runner) and every sum the partners see (the probability endpoint) go through it.
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
