/**
 * The model simulator: a local OpenAI-compatible HTTP server (DESIGN §6).
 *
 * Speaks enough of the Chat Completions protocol for the openai SDK: `POST /v1/chat/completions`
 * returns a `chat.completion` object whose content is the JSON forecast of `simulateAnswer` (a
 * deterministic function of the model name and the prompt; it never sees outcomes), and
 * `GET /v1/models` lists the simulated models. No authentication: any API key is accepted.
 *
 * Latency: `latencyMs` before every answer, plus a seeded uniform jitter of up to `jitterMs`
 * (realistic replies take seconds; the default is 0 so tests stay fast).
 *
 * Faults, by configuration (`faults`, or `QUORUM_SIMULATOR_FAULTS` as JSON, see `parseFaultRules`),
 * chosen per request by the first matching rule:
 *   rate_limit        429 with `Retry-After: <retryAfterSeconds>` (OpenAI error body)
 *   server_error      500 (or `status`) with an OpenAI error body
 *   hang              accepts the request and never answers (until the client hangs up)
 *   stall             sends the 200 headers and half the body, then nothing more
 *   malformed_json    a completion whose content is not JSON
 *   schema_violation  a completion whose content is JSON that violates the forecast schema
 *   truncated         a completion cut at the token limit (finish_reason "length", half the content)
 *   truncated_body    the HTTP body itself is cut: full Content-Length promised, socket closed mid-body
 * A rule matches requests whose prompt contains its `marker` (and whose model is `model`, when
 * given), or a `fraction` of those requests (seeded, reproducible), or every request; `times` caps
 * how often it fires.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { simulateAnswer } from './answer.ts';

export const SIMULATED_MODEL_NAMES = ['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek'] as const;

export const FAULT_KINDS = [
  'rate_limit',
  'server_error',
  'malformed_json',
  'schema_violation',
  'truncated',
  'truncated_body',
  'hang',
  'stall',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRule {
  kind: FaultKind;
  /** Fire only for requests whose messages contain this string. */
  marker?: string;
  /** Fire only for requests to this model name. */
  model?: string;
  /** Fire for this fraction (0..1) of the requests that otherwise match (seeded PRNG). */
  fraction?: number;
  /** Fire at most this many times. */
  times?: number;
  /** rate_limit: the Retry-After header, in seconds (may be fractional). Default 1. */
  retryAfterSeconds?: number;
  /** server_error: the status code. Default 500. */
  status?: number;
}

export interface SimulatorOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** Delay before every answer (ms). Default 0. */
  latencyMs?: number;
  /** Extra delay, uniform in [0, jitterMs) per request (seeded). Default 0. */
  jitterMs?: number;
  faults?: FaultRule[];
  /** Seed of the PRNG behind `fraction` faults and jitter. Default 1. */
  seed?: number;
}

/** The fault rules as configured in JSON (`QUORUM_SIMULATOR_FAULTS`, `--faults`). */
export const faultRulesSchema = z.array(
  z
    .object({
      kind: z.enum(FAULT_KINDS),
      marker: z.string().min(1).optional(),
      model: z.string().min(1).optional(),
      fraction: z.number().min(0).max(1).optional(),
      times: z.number().int().min(0).optional(),
      retryAfterSeconds: z.number().min(0).optional(),
      status: z.number().int().min(500).max(599).optional(),
    })
    .strict(),
);

/** Parses fault rules from JSON text; throws an Error naming the bad rule and field. */
export function parseFaultRules(text: string): FaultRule[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`simulator faults: not valid JSON (${(err as Error).message})`);
  }
  const parsed = faultRulesSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`simulator faults: ${issues.join('; ')}`);
  }
  return parsed.data;
}

export interface ModelStats {
  requests: number;
  inFlight: number;
  maxInFlight: number;
}

export interface SimulatorStats extends ModelStats {
  /** Completions answered normally (status 200, finish_reason stop). */
  completions: number;
  faults: Record<FaultKind, number>;
  byModel: Record<string, ModelStats>;
}

export interface Simulator {
  /** Base URL ending in /v1, e.g. http://127.0.0.1:43211/v1. */
  url: string;
  port: number;
  close(): Promise<void>;
  stats(): SimulatorStats;
  resetStats(): void;
  /** Replaces the fault rules (and their `times` counters). */
  setFaults(rules: FaultRule[]): void;
}

const MAX_BODY = 4 * 1024 * 1024;

/** Starts the simulator on loopback; resolves once it listens. */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const latencyMs = opts.latencyMs ?? 0;
  const jitterMs = opts.jitterMs ?? 0;
  let rules: { rule: FaultRule; fired: number }[] = [];
  const setFaults = (r: FaultRule[]) => {
    rules = r.map((rule) => ({ rule, fired: 0 }));
  };
  setFaults(opts.faults ?? []);
  const rng = mulberry32(opts.seed ?? 1);
  let stats = emptyStats();
  let seq = 0;
  const timers = new Set<NodeJS.Timeout>();
  const hanging = new Set<ServerResponse>();

  const pickFault = (text: string, model: string): FaultRule | null => {
    for (const r of rules) {
      const { rule } = r;
      if (rule.times !== undefined && r.fired >= rule.times) continue;
      if (rule.model !== undefined && rule.model !== model) continue;
      if (rule.marker !== undefined && !text.includes(rule.marker)) continue;
      if (rule.fraction !== undefined && !(rng() < rule.fraction)) continue;
      r.fired++;
      return rule;
    }
    return null;
  };

  const handleCompletion = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      return sendError(res, 400, 'invalid_request_error', `invalid JSON body: ${(err as Error).message}`);
    }
    const b = body as { model?: unknown; messages?: unknown; max_completion_tokens?: unknown; max_tokens?: unknown };
    if (typeof b?.model !== 'string' || !Array.isArray(b.messages) || b.messages.length === 0) {
      return sendError(res, 400, 'invalid_request_error', 'body needs "model" (string) and "messages" (non-empty array)');
    }
    const model = b.model;
    const text = b.messages.map(messageText).join('\n\n');
    const userText = b.messages
      .filter((m) => (m as { role?: unknown })?.role === 'user')
      .map(messageText)
      .join('\n\n');
    const maxTokens = numberOr(b.max_completion_tokens, numberOr(b.max_tokens, Infinity));

    const ms = (stats.byModel[model] ??= { requests: 0, inFlight: 0, maxInFlight: 0 });
    stats.requests++;
    ms.requests++;
    stats.inFlight++;
    ms.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    ms.maxInFlight = Math.max(ms.maxInFlight, ms.inFlight);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      stats.inFlight--;
      ms.inFlight--;
    };
    res.once('close', finish);

    const delay = latencyMs + (jitterMs > 0 ? rng() * jitterMs : 0);
    if (delay > 0) {
      await new Promise<void>((r) => {
        const t = setTimeout(() => {
          timers.delete(t);
          r();
        }, delay);
        timers.add(t);
      });
      if (res.destroyed) return;
    }

    const fault = pickFault(text, model);
    if (fault) stats.faults[fault.kind]++;
    const answer = simulateAnswer(model, userText || text);
    let content = JSON.stringify(answer);
    let finishReason: 'stop' | 'length' = 'stop';
    switch (fault?.kind) {
      case 'hang':
        hanging.add(res);
        res.once('close', () => hanging.delete(res));
        return;
      case 'rate_limit':
        return sendError(res, 429, 'rate_limit_exceeded', 'Rate limit reached (simulated fault).', {
          'retry-after': String(fault.retryAfterSeconds ?? 1),
        });
      case 'server_error':
        return sendError(res, fault.status ?? 500, 'server_error', 'The server had an error (simulated fault).');
      case 'malformed_json':
        content = `{"probability": ${answer.probability}, "reasoning": "simulated malformed reply`;
        break;
      case 'schema_violation':
        content = JSON.stringify({ probability: 'likely', reasoning: answer.reasoning });
        break;
      case 'truncated':
        content = content.slice(0, Math.floor(content.length / 2));
        finishReason = 'length';
        break;
      default:
        break;
    }
    const promptTokens = approxTokens(text);
    let completionTokens = approxTokens(content);
    if (completionTokens > maxTokens) {
      content = content.slice(0, Math.max(0, Math.floor(maxTokens) * 4));
      completionTokens = approxTokens(content);
      finishReason = 'length';
    }
    if (!fault) stats.completions++;
    const completion = {
      id: `chatcmpl-sim-${++seq}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model,
      system_fingerprint: 'quorum-simulator',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
    if (fault?.kind === 'truncated_body' || fault?.kind === 'stall') {
      const data = Buffer.from(JSON.stringify(completion));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': data.length });
      const half = data.subarray(0, Math.floor(data.length / 2));
      if (fault.kind === 'truncated_body') {
        res.write(half, () => res.socket?.destroy());
      } else {
        hanging.add(res);
        res.once('close', () => hanging.delete(res));
        res.write(half);
      }
      return;
    }
    sendJson(res, 200, completion);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') return sendError(res, 405, 'invalid_request_error', 'use POST');
      handleCompletion(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, 'server_error', (err as Error).message);
        else res.destroy();
      });
      return;
    }
    if (path === '/v1/models' && req.method === 'GET') {
      return sendJson(res, 200, {
        object: 'list',
        data: SIMULATED_MODEL_NAMES.map((id) => ({ id, object: 'model', created: 0, owned_by: 'quorum-simulator' })),
      });
    }
    sendError(res, 404, 'invalid_request_error', `unknown route ${req.method} ${path}`);
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  return {
    url: `http://${host}:${addr.port}/v1`,
    port: addr.port,
    stats: () => structuredClone(stats),
    resetStats: () => {
      const inFlight = stats.inFlight;
      stats = emptyStats();
      stats.inFlight = inFlight;
    },
    setFaults,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function emptyStats(): SimulatorStats {
  return {
    requests: 0,
    completions: 0,
    inFlight: 0,
    maxInFlight: 0,
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    byModel: {},
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function messageText(m: unknown): string {
  const content = (m as { content?: unknown })?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '')).join('');
  }
  return '';
}

function approxTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

function numberOr(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(data),
    ...headers,
  });
  res.end(data);
}

function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

/** Small seeded PRNG (reproducible `fraction` faults). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
