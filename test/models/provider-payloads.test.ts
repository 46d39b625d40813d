/**
 * The runner against a loopback server answering with real providers' payloads (not the bundled
 * simulator): the shapes below are those of OpenAI's API as recorded in the openai-node repository's
 * test snapshots (tests/lib/__snapshots__/parser.test.ts.snap: a chat.completion with `refusal: null`
 * and `usage`) and as reported in public issues (langchain-ai/langchainjs#1929: the 429
 * `insufficient_quota` body of an account out of credit).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ResolvedModel } from '../../pipeline/models/config.ts';
import { runForecasts, type ForecastTask } from '../../pipeline/models/runner.ts';
import { json, startReplayServer, type ReplayServer, type ScriptedResponse } from '../helpers/replay-server.ts';

const asOf = new Date('2025-10-26T12:00:00Z');

function task(n: number): ForecastTask {
  return {
    mode: 'blind',
    question: {
      question_id: `q:${n}`,
      title: `Will event ${n} happen by 2026?`,
      description: null,
      resolution_criteria: 'Resolves YES if it happens.',
      url: null,
      created_at: null,
      close_time: new Date('2026-01-01T00:00:00Z'),
      category: 'world',
      domain: 'other',
    },
    market: null,
    evidence: [],
  };
}

/** A chat.completion as OpenAI returns it (openai-node's recorded snapshot, content replaced). */
function completion(content: string | null, opts: { finish?: string; usage?: unknown; message?: Record<string, unknown> } = {}) {
  const body: Record<string, unknown> = {
    id: 'chatcmpl-9tZXFjiGKgtrHZeIxvkklWe51DYZp',
    object: 'chat.completion',
    created: 1723031665,
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null, ...opts.message }, logprobs: null, finish_reason: opts.finish ?? 'stop' }],
    system_fingerprint: 'fp_2a322c9ffc',
  };
  if (opts.usage !== null) body.usage = opts.usage ?? { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
  return body;
}

const FORECAST = JSON.stringify({ probability: 0.65, reasoning: 'Because.', key_factors: ['a factor'] });

let server: ReplayServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** One model (priced like gpt-4o) on a loopback server answering `responses` in order. */
async function modelAnswering(responses: ScriptedResponse[] | ((n: number) => ScriptedResponse)): Promise<ResolvedModel> {
  let n = 0;
  server = await startReplayServer([
    { method: 'POST', path: '/v1/chat/completions', responses: typeof responses === 'function' ? () => responses(n++) : responses },
  ]);
  return {
    id: 'gpt-4o',
    display_name: 'GPT-4o',
    base_url: `${server.url}/v1`,
    api_key_env: 'OPENAI_API_KEY',
    model: 'gpt-4o',
    max_concurrency: 1,
    requests_per_minute: 10_000,
    price_in_per_mtok: 2.5,
    price_out_per_mtok: 10,
    provider: 'openai',
    response_format: 'json_schema',
    apiKey: 'sk-test',
  };
}

describe('runner: real provider payloads', () => {
  it('a 429 insufficient_quota (no credit left) is not retried and is recorded as quota_exhausted', async () => {
    const model = await modelAnswering([
      json(
        {
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        },
        429,
      ),
    ]);
    const t0 = Date.now();
    const { calls, forecasts } = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(forecasts).toEqual([]);
    expect(calls[0]).toMatchObject({ status: 'failed', error_kind: 'quota_exhausted', attempts: 1 });
    expect(calls[0]!.error_message).toMatch(/exceeded your current quota/);
    expect(server!.log).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(400); // no backoff
  });

  it('a 429 without Retry-After waits for the reset its x-ratelimit headers give (OpenAI\'s documented headers), or fails at once when that is past the deadline', async () => {
    const limited = (reset: string) =>
      json(
        { error: { message: 'Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3, Requested 1.', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
        429,
        { 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': reset, 'x-ratelimit-remaining-tokens': '29000', 'x-ratelimit-reset-tokens': '2ms' },
      );
    const model = await modelAnswering([limited('2s'), json(completion(FORECAST))]);
    const { calls } = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(calls[0]).toMatchObject({ status: 'ok', attempts: 2 });
    // the requests' reset (their limit is the one spent), not the SDK's own half-second backoff
    expect(server!.log[1]!.at - server!.log[0]!.at).toBeGreaterThanOrEqual(1900);
    await server!.close();
    const far = await modelAnswering([limited('6m0s'), json(completion(FORECAST))]);
    const later = await runForecasts({ models: [far], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 3_000 });
    expect(later.calls[0]).toMatchObject({ status: 'failed', error_kind: 'rate_limited', attempts: 1 });
    expect(server!.log).toHaveLength(1);
  });

  it('a 429 of the tokens-per-minute limit (tokens left, but fewer than the call needs) waits for the tokens\' reset, not the requests\' (QA review)', async () => {
    // OpenAI's TPM message ("Used 29500, Requested 1200"): no limit reads 0 remaining; the tokens' share left is the smaller.
    const limited = json(
      { error: { message: 'Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in 1.4s.', type: 'tokens', param: null, code: 'rate_limit_exceeded' } },
      429,
      { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499', 'x-ratelimit-reset-requests': '120ms', 'x-ratelimit-limit-tokens': '30000', 'x-ratelimit-remaining-tokens': '500', 'x-ratelimit-reset-tokens': '1.4s' },
    );
    const model = await modelAnswering([limited, json(completion(FORECAST))]);
    const { calls } = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(calls[0]).toMatchObject({ status: 'ok', attempts: 2 });
    // it retried after the requests' 120 ms, when the tokens were still short: a second and third 429 under a sustained limit
    expect(server!.log[1]!.at - server!.log[0]!.at).toBeGreaterThanOrEqual(1300);
  });

  it('a 429 rate limit (rate_limit_exceeded) is still retried by the SDK, then rate_limited', async () => {
    const model = await modelAnswering([
      json(
        { error: { message: 'Rate limit reached for gpt-4o on requests per min (RPM): Limit 3, Used 3, Requested 1.', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
        429,
        { 'retry-after': '0.02', 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20s' },
      ),
    ]);
    const { calls } = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(calls[0]).toMatchObject({ status: 'failed', error_kind: 'rate_limited', attempts: 3 });
    expect(server!.log).toHaveLength(3);
  });

  it('a reply without usage is costed from its text, so the budget stops a model that never reports usage', async () => {
    // QA: a priced model whose replies omit `usage` cost "0": a $0.000001 budget made every call
    const model = await modelAnswering([json(completion(FORECAST, { usage: null }))]);
    const tasks = [1, 2, 3, 4, 5, 6].map(task);
    const out = await runForecasts({ models: [model], tasks, runId: 'r', asOf, budgetUsd: 0.000001 });
    expect(out.calls[0]).toMatchObject({ status: 'ok', tokens_in: null, tokens_out: null });
    expect(out.calls[0]!.cost_usd).toBeGreaterThan(0);
    expect(out.budgetExhausted).toBe(true);
    expect(server!.log).toHaveLength(1);
    expect(out.calls.slice(1).every((c) => c.status === 'skipped' && c.error_kind === 'budget_exhausted')).toBe(true);
    expect(out.spentUsd).toBe(out.calls[0]!.cost_usd);
  });

  it('a status-200 body that is no completion (a proxy error object) has no cost', async () => {
    const model = await modelAnswering([json({ error: { message: 'Provider returned error', code: 502 } })]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'server_error', attempts: 2, cost_usd: null, tokens_in: null });
  });

  it('an error given as a string in a status-200 body (Ollama\'s error shape, {"error": "..."}, docs/api.md "Errors") keeps its reason (QA: "reply has no choices")', async () => {
    const model = await modelAnswering([json({ error: 'model "llama3.1" not found, try pulling it first' })]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', attempts: 2, cost_usd: null });
    expect(out.calls[0]!.error_message).toBe('error in a status-200 reply: model "llama3.1" not found, try pulling it first');
  });

  it("an error object sent with status 200 (OpenRouter, once the model started) keeps the provider's code and reason", async () => {
    // openrouter.ai/docs/errors: "the returned HTTP response status will be 200 and any error occurred while the
    // LLM is producing the output will be emitted in the response body", {error: {code, message, metadata}};
    // the metadata as OpenRouter's SDK documents it (GenerationContentErrorAttempt: providerName, raw)
    const upstream = json({ error: { code: 429, message: 'Provider returned error', metadata: { provider_name: 'Google', raw: '{"error":{"code":429,"message":"Resource exhausted"}}' } } });
    const model = await modelAnswering([upstream, upstream, json(completion(FORECAST))]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'rate_limited', attempts: 2 });
    expect(out.calls[0]!.error_message).toBe('error in a status-200 reply: 429 Provider returned error (Google: {"error":{"code":429,"message":"Resource exhausted"}})');
    expect(out.calls[1]).toMatchObject({ status: 'ok', attempts: 1 });
    expect(out.forecasts.map((f) => f.question_id)).toEqual(['q:2']);
  });

  it("an error inside the choice of a status-200 reply (OpenRouter's finish_reason \"error\") keeps the provider's code and reason", async () => {
    // OpenRouter's response schema: NonStreamingChoice = {finish_reason, native_finish_reason, message, error?: ErrorResponse},
    // finish_reason "error" when the model finishes the request with an error (OpenRouter's API reference, "Completions
    // Response Format", as mirrored at docs.blackbox.ai/api-reference/responses; Koog's OpenRouterChoice documents the same)
    const failed = completion('', { finish: 'error', usage: { prompt_tokens: 1000, completion_tokens: 0, total_tokens: 1000 } }) as { choices: Record<string, unknown>[] };
    failed.choices[0]!.native_finish_reason = 'error';
    failed.choices[0]!.error = { code: 502, message: 'Provider returned error', metadata: { provider_name: 'Together', raw: 'upstream connect error' } };
    const model = await modelAnswering([json(failed), json(failed), json(completion(FORECAST))]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'server_error', attempts: 2, tokens_in: 2000 });
    expect(out.calls[0]!.error_message).toBe('error in a status-200 reply: 502 Provider returned error (Together: upstream connect error)');
    expect(out.calls[1]).toMatchObject({ status: 'ok', attempts: 1 });
  });

  it('a reply with usage is costed from it, every response of the call counted', async () => {
    const model = await modelAnswering([json(completion('not json')), json(completion(FORECAST))]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 2, tokens_in: 2000, tokens_out: 200 });
    expect(out.calls[0]!.cost_usd).toBeCloseTo((2000 * 2.5 + 200 * 10) / 1e6, 12);
  });

  it.each([
    ['a sentence before the object', `Here is my forecast:\n${FORECAST}`],
    ['a fenced block after a sentence', `Sure. Based on the criteria:\n\n\`\`\`json\n${FORECAST}\n\`\`\`\nLet me know if you need more.`],
    ['a reasoning model\'s think block first', `<think>\nThe base rate is {roughly} a half.\n</think>\n\n${FORECAST}`],
  ])('a JSON object inside other text is the reply (%s): one call, no re-ask', async (_what, content) => {
    // Anthropic's OpenAI compatibility layer ignores response_format (docs.anthropic.com/en/api/openai-sdk);
    // local JSON-mode servers and reasoning models answer like this
    const model = await modelAnswering([json(completion(content))]);
    const out = await runForecasts({ models: [{ ...model, response_format: 'json_object' }], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 1 });
    expect(out.forecasts[0]).toMatchObject({ probability: 0.65, reasoning: 'Because.', key_factors: ['a factor'] });
  });

  it("thinking without its opening tag (DeepSeek-R1 distills on vLLM or Ollama) is not the answer: a draft in it is never the forecast", async () => {
    // the reply begins inside the thinking and shows only its closing tag (vllm-project/vllm#13125,
    // deepseek-ai/DeepSeek-R1#352); a reasoning model drafts the JSON while it thinks
    const draft = JSON.stringify({ probability: 0.9, reasoning: 'A first draft.', key_factors: ['draft'] });
    const model = await modelAnswering([
      json(completion(`Okay, the base rate is low. A first draft: ${draft}. Hmm, that is too high.\n</think>\n\n${FORECAST}`)),
      json(completion(`Okay. A first draft: ${draft}\n</think>\n\nI cannot give a forecast for this question.`)),
    ]);
    const out = await runForecasts({ models: [{ ...model, response_format: 'json_object' }], tasks: [task(1), task(2)], runId: 'r', asOf });
    // the answer after the thinking, at once (it was unreadable: asked again, paid twice, failed)
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 1 });
    expect(out.forecasts.map((f) => [f.question_id, f.probability])).toEqual([['q:1', 0.65]]);
    // no answer after the thinking: no forecast (the draft's 0.9 was recorded)
    expect(out.calls[1]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2 });
  });

  it('text with no JSON object in it, or a cut one, is still invalid_json (asked once more)', async () => {
    const model = await modelAnswering([json(completion('I would put this at about 65%.')), json(completion('{"probability": 0.65, "reasoning": "cut'))]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2 });
    expect(out.forecasts).toEqual([]);
  });

  it('Mistral\'s finish_reason "model_length" (the context length reached: mistralai\'s ChatCompletionChoice enum; the Vercel AI SDK maps it to length) is truncated, as "length" is, not invalid_json', async () => {
    const cut = completion('{"probability": 0.62, "reasoning": "The latest polling sh', { finish: 'model_length' });
    const model = await modelAnswering([json(cut), json(cut)]);
    const { calls, forecasts } = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(forecasts).toEqual([]);
    expect(calls[0]).toMatchObject({ status: 'failed', error_kind: 'truncated', attempts: 2 });
    expect(calls[0]!.error_message).toMatch(/model_length/);
  });

  it('DeepSeek\'s finish_reason "insufficient_system_resource" (the generation interrupted by the provider) is server_error, asked once more, not invalid_json', async () => {
    // DeepSeek's chat completion finish reasons: stop, length, content_filter, tool_calls,
    // insufficient_system_resource ("the request is interrupted due to insufficient resource of the
    // inference system"; api-docs.deepseek.com, as the ds-api crate's FinishReason enum mirrors it)
    const cut = completion('{"probability": 0.6', { finish: 'insufficient_system_resource' });
    const model = await modelAnswering([json(cut), json(cut), json(cut), json(completion(FORECAST))]);
    const first = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(first.forecasts).toEqual([]);
    expect(first.calls[0]).toMatchObject({ status: 'failed', error_kind: 'server_error', attempts: 2, tokens_in: 2000, tokens_out: 200 });
    expect(first.calls[0]!.error_message).toMatch(/insufficient_system_resource/);
    const second = await runForecasts({ models: [model], tasks: [task(2)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(second.calls[0]).toMatchObject({ status: 'ok', attempts: 2 });
    expect(second.forecasts.map((f) => f.probability)).toEqual([0.65]);
  });

  it('a refusal (content null, refusal set) is recorded as refused, with its text, and not asked again', async () => {
    // the refusal as OpenAI sends it (openai-node tests/lib/ChatCompletionStream.test.ts snapshot)
    const model = await modelAnswering([json(completion(null, { message: { refusal: "I'm very sorry, but I can't assist with that request." } }))]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'refused', attempts: 1 });
    expect(out.calls[0]!.error_message).toBe("model refused: I'm very sorry, but I can't assist with that request.");
    expect(server!.log).toHaveLength(1);
  });

  it('finish_reason content_filter (Azure OpenAI: content null or cut) is refused, not invalid_json', async () => {
    const model = await modelAnswering([json(completion(null, { finish: 'content_filter' })), json(completion('{"probability": 0.6', { finish: 'content_filter' }))]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    for (const c of out.calls) {
      expect(c).toMatchObject({ status: 'failed', error_kind: 'refused', attempts: 1 });
      expect(c.error_message).toMatch(/content filter/);
    }
    expect(server!.log).toHaveLength(2);
  });

  it("OpenAI's own prompt flag (400 invalid_prompt) is refused, not other, and not asked again", async () => {
    // the body as OpenAI sends it (public reports: alan-turing-institute/t0-1#69,
    // BeehiveInnovations/pal-mcp-server#178). QA: it was `other`, so a question every model flagged
    // was not known as refused (the probability endpoint answered a 503 to retry).
    const body = {
      error: {
        message:
          'Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt: https://platform.openai.com/docs/guides/reasoning#advice-on-prompting',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_prompt',
      },
    };
    const model = await modelAnswering([json(body, 400)]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'refused', attempts: 1 });
    expect(out.calls[0]!.error_message).toMatch(/^400 Invalid prompt: your prompt was flagged/);
    expect(server!.log).toHaveLength(1);
  });

  it("Google's OpenAI-compatible error body (an array) keeps the provider's reason in error_message", async () => {
    // the body as Google's endpoint sends it (public reports: bytedance/deer-flow#1515, MinLL/SkyrimNet-GamePlugin#77)
    const model = await modelAnswering([
      json([{ error: { code: 400, message: 'Invalid JSON payload received. Unknown name "thinking": Cannot find field.', status: 'INVALID_ARGUMENT' } }], 400),
    ]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'other', attempts: 1 });
    expect(out.calls[0]!.error_message).toBe('400 Invalid JSON payload received. Unknown name "thinking": Cannot find field.');
  });

  it("a reply whose content is a list of chunks (Mistral's Magistral: thinking, then text) is read from its text", async () => {
    // the shape reported in spring-projects/spring-ai#5020 (magistral-medium-2509)
    const content = [
      { type: 'thinking', thinking: [{ type: 'text', text: 'The base rate is {about} a half.' }] },
      { type: 'text', text: FORECAST },
    ];
    const model = await modelAnswering([json(completion(null, { message: { content } }))]);
    const out = await runForecasts({ models: [{ ...model, response_format: 'json_object' }], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 1 });
    expect(out.forecasts[0]).toMatchObject({ probability: 0.65, reasoning: 'Because.' });
  });

  it("a reply given as a tool call (LiteLLM's json_tool_call: content null, the JSON in the arguments) is the forecast, read once and costed", async () => {
    // The shape a LiteLLM proxy answers in front of Claude with a response_format: litellm enforces
    // it with a forced tool named RESPONSE_FORMAT_TOOL_NAME = "json_tool_call" (litellm/constants.py,
    // "default tool name used when converting response format to tool call"), and its reply came
    // back with `message.content` None and the JSON in `message.tool_calls[0].function.arguments`
    // (BerriAI/litellm#6741, claude-3-5-sonnet with response_format json_object). Before, the call
    // was invalid_json "empty reply (finish_reason "tool_calls")", asked twice, paid twice and lost.
    const toolCall = (args: string) => ({ tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'json_tool_call', arguments: args } }] });
    const model = await modelAnswering([
      json(completion(null, { finish: 'tool_calls', message: toolCall(FORECAST) })),
      // no usage: the cost is estimated from the text, the arguments included
      json(completion(null, { finish: 'tool_calls', usage: null, message: toolCall(JSON.stringify({ probability: 0.2, reasoning: 'x'.repeat(4000), key_factors: [] })) })),
    ]);
    const out = await runForecasts({ models: [{ ...model, response_format: 'json_object' }], tasks: [task(1), task(2)], runId: 'r', asOf });
    expect(out.calls.map((c) => [c.status, c.attempts, c.error_kind])).toEqual([['ok', 1, null], ['ok', 1, null]]);
    expect(out.forecasts.map((f) => [f.question_id, f.probability, f.reasoning.length])).toEqual([['q:1', 0.65, 8], ['q:2', 0.2, 4000]]);
    expect(server!.log).toHaveLength(2);
    // the estimate counts the ~1,000 output tokens of the arguments (at $10 per million: ≥ $0.01)
    expect(out.calls[1]!.cost_usd!).toBeGreaterThan(0.01);
  });

  it('a tool call whose arguments are not the forecast is still a bad reply, asked once more', async () => {
    const bad = { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'json_tool_call', arguments: '{"probability": 0.4, "reas' } }] };
    const model = await modelAnswering([json(completion(null, { finish: 'tool_calls', message: bad }))]);
    const out = await runForecasts({ models: [{ ...model, response_format: 'json_object' }], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2 });
    expect(out.forecasts).toEqual([]);
  });

  it("a 402 (DeepSeek's Insufficient Balance) is quota_exhausted, not retried", async () => {
    // the status and message DeepSeek users report (continuedev/continue#9942: "402 Insufficient Balance")
    const model = await modelAnswering([json({ error: { message: 'Insufficient Balance', type: 'unknown_error', param: null, code: 'invalid_request_error' } }, 402)]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'quota_exhausted', attempts: 1, error_message: '402 Insufficient Balance' });
  });
});

describe('runner: replies with no body', () => {
  it('a 200 with an empty body (content-length: 0) is invalid_json and asked once more, not an internal error', async () => {
    // the empty JSON body the SDK reads as undefined (openai-node internal/parse.ts; openai/openai-node#1998);
    // OpenAI-compatible relays answer so (bestruirui/octopus#208, router-for-me/CLIProxyAPI#2190)
    const empty: ScriptedResponse = { status: 200, body: '', headers: { 'content-type': 'application/json' } };
    const model = await modelAnswering([empty, json(completion(FORECAST))]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    // the first call: empty, then a valid reply on the second ask
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 2 });
    expect(out.forecasts.map((f) => f.probability)).toEqual([0.65, 0.65]);
    await server!.close();
    const never = await modelAnswering([empty]);
    const failed = await runForecasts({ models: [never], tasks: [task(1)], runId: 'r', asOf });
    expect(failed.calls[0]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2, cost_usd: null });
    expect(failed.calls[0]!.error_message).toMatch(/empty/);
    expect(failed.forecasts).toEqual([]);
  });
});

describe('runner: usage as OpenAI-compatible servers report it', () => {
  it("thinking tokens reported only in the total (a Gemini relay's usage) are costed as output", async () => {
    // the usage of router-for-me/CLIProxyAPI#5733 (Gemini through an OpenAI-compatible relay):
    // completion_tokens 0, the 60 thinking tokens in reasoning_tokens and total_tokens only
    const usage = { prompt_tokens: 21, completion_tokens: 0, total_tokens: 81, completion_tokens_details: { reasoning_tokens: 60 } };
    const model = await modelAnswering([json(completion(FORECAST, { usage }))]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', tokens_in: 21, tokens_out: 60 });
    expect(out.calls[0]!.cost_usd).toBeCloseTo((21 * 2.5 + 60 * 10) / 1e6, 12);
  });

  it("OpenAI's usage (thinking inside completion_tokens, cached tokens inside prompt_tokens) is costed as reported", async () => {
    // the shape of OpenAI's chat.completion usage for a reasoning model (openai-node CompletionUsage)
    const usage = { prompt_tokens: 1200, completion_tokens: 500, total_tokens: 1700, prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 448, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } };
    const model = await modelAnswering([json(completion(FORECAST, { usage }))]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ tokens_in: 1200, tokens_out: 500 });
    expect(out.calls[0]!.cost_usd).toBeCloseTo((1200 * 2.5 + 500 * 10) / 1e6, 12);
  });

  it('a fractional count is rounded up (as billed); a count past 2^53 is no count (the warehouse stores whole tokens)', async () => {
    // completion_tokens 37.25: Hugging Face's endpoints as philschmid/easyllm#42 reports them
    const model = await modelAnswering([
      json(completion(FORECAST, { usage: { prompt_tokens: 1000.2, completion_tokens: 37.25, total_tokens: 1037.45 } })),
      json(completion(FORECAST, { usage: { prompt_tokens: 1e300, completion_tokens: 100, total_tokens: 1e300 } })),
    ]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', tokens_in: 1001, tokens_out: 38, cost_usd: (1001 * 2.5 + 38 * 10) / 1e6 });
    expect(out.calls[1]).toMatchObject({ status: 'ok', tokens_in: null, tokens_out: 100 });
    expect(out.calls[1]!.cost_usd).toBeLessThan(0.01); // the prompt estimated from its text, not 1e300 tokens
  });

  it('usage fields that are null are not counted as 0 tokens: null tokens, cost estimated from the text', async () => {
    // @ai-sdk/openai types every usage field of an OpenAI-compatible chat completion as number | null (convert-openai-chat-usage.ts)
    const usage = { prompt_tokens: null, completion_tokens: null, total_tokens: null };
    const model = await modelAnswering([json(completion(FORECAST, { usage })), json(completion('not json', { usage })), json(completion(FORECAST, { usage }))]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'ok', tokens_in: null, tokens_out: null });
    expect(out.calls[1]).toMatchObject({ status: 'ok', attempts: 2, tokens_in: null, tokens_out: null });
    expect(out.calls[0]!.cost_usd).toBeGreaterThan(0);
    expect(out.calls[1]!.cost_usd).toBeGreaterThan(out.calls[0]!.cost_usd!);
  });
});

describe('runner: replies paid for but never read whole', () => {
  it('a reply cut mid-body is costed at its prompt (a lower bound), so the budget counts what the provider billed', async () => {
    // OpenAI's completion body, its connection reset after 60 bytes of the advertised Content-Length
    const cut: ScriptedResponse = { ...json(completion(FORECAST)), truncate: { bytes: 60, mode: 'destroy' } };
    const model = await modelAnswering([cut]);
    const tasks = [1, 2, 3, 4].map(task);
    const out = await runForecasts({ models: [model], tasks, runId: 'r', asOf, budgetUsd: 0.000001 });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'truncated_body', attempts: 2, tokens_in: null, tokens_out: null });
    // two replies generated and billed: each at least its prompt's input tokens
    expect(out.calls[0]!.cost_usd).toBeGreaterThan(0);
    expect(out.budgetExhausted).toBe(true);
    expect(server!.log).toHaveLength(2);
    expect(out.calls.slice(1).every((c) => c.status === 'skipped')).toBe(true);
    expect(out.forecasts).toEqual([]);
  });

  it('a reply stalled after its headers (timeout) counts one prompt; a server that never answered counts nothing', async () => {
    // headers and the first bytes of OpenAI's completion, then nothing (its Content-Length never reached)
    const { createServer } = await import('node:http');
    const body = Buffer.from(JSON.stringify(completion(FORECAST)));
    const sockets = new Set<import('node:net').Socket>();
    const hold = createServer((req, res) => {
      sockets.add(req.socket);
      req.resume();
      req.on('end', () => {
        if (req.url?.includes('hang')) return; // never answers
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        res.write(body.subarray(0, 60));
      });
    });
    await new Promise<void>((r) => hold.listen(0, '127.0.0.1', () => r()));
    const port = (hold.address() as import('node:net').AddressInfo).port;
    try {
      const base = await modelAnswering([json(completion(FORECAST))]);
      await server!.close();
      const out = await runForecasts({
        models: [
          { ...base, id: 'stalls', base_url: `http://127.0.0.1:${port}/v1` },
          { ...base, id: 'hangs', base_url: `http://127.0.0.1:${port}/hang/v1` },
        ],
        tasks: [task(1)],
        runId: 'r',
        asOf,
        callTimeoutMs: 600,
      });
      expect(out.calls.map((c) => [c.model, c.error_kind, c.attempts])).toEqual([['stalls', 'timeout', 1], ['hangs', 'timeout', 1]]);
      expect(out.calls[0]!.cost_usd).toBeGreaterThan(0);
      expect(out.calls[1]!.cost_usd).toBeNull();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => hold.close(() => r()));
    }
  });
});

describe('runner: the prompt refused by a content filter', () => {
  it("Azure OpenAI's 400 content_filter and OpenRouter's 403 moderation error are refused, not other", async () => {
    // the body of openai/openai-agents-python#806 (Azure OpenAI, gpt-4o)
    const azure = json(
      {
        error: {
          message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
          code: 'content_filter',
          innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { jailbreak: { detected: true, filtered: true } } },
        },
      },
      400,
    );
    // OpenRouter's moderation error (openrouter.ai/docs/errors: 403, metadata reasons, flagged_input, provider_name, model_slug)
    const openrouter = json(
      { error: { code: 403, message: 'openai/gpt-4o requires moderation on OpenAI. Your input was flagged for "violence".', metadata: { reasons: ['violence'], flagged_input: 'Will the attack...', provider_name: 'OpenAI', model_slug: 'openai/gpt-4o' } } },
      403,
    );
    const model = await modelAnswering([azure, openrouter, json({ error: { message: 'Invalid value for max_completion_tokens', type: 'invalid_request_error', param: 'max_completion_tokens', code: 'invalid_value' } }, 400)]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2), task(3)], runId: 'r', asOf });
    expect(out.calls.map((c) => [c.error_kind, c.attempts])).toEqual([['refused', 1], ['refused', 1], ['other', 1]]);
    expect(out.calls[0]!.error_message).toMatch(/^400 The response was filtered due to the prompt/);
    expect(out.calls[1]!.error_message).toMatch(/flagged for "violence"/);
  });
});

describe('runner: translations in the reply (QUORUM_LANGS with several languages)', () => {
  const withFr = (fr: unknown) =>
    JSON.stringify({ probability: 0.65, reasoning: 'Because.', key_factors: ['a factor'], translations: { fr } });

  it('a blank translation is asked again, never stored as an empty reasoning (QA); still blank, the forecast is kept without it', async () => {
    // first reply: the French reasoning empty; second: whitespace only; then a real one
    const model = await modelAnswering([
      json(completion(withFr({ reasoning: '', key_factors: [] }))),
      json(completion(withFr({ reasoning: ' \n ', key_factors: ['un facteur'] }))),
      json(completion(withFr({ reasoning: 'Parce que.', key_factors: ['un facteur'] }))),
    ]);
    const first = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, langs: ['en', 'fr'], callTimeoutMs: 10_000 });
    expect(first.calls[0]).toMatchObject({ status: 'ok', error_kind: null, attempts: 2 });
    expect(first.calls[0]!.error_message).toMatch(/translations missing: fr .*translations\.fr\.reasoning/);
    expect(first.forecasts.map((f) => [f.lang, f.reasoning])).toEqual([['en', 'Because.']]);
    const second = await runForecasts({ models: [model], tasks: [task(2)], runId: 'r', asOf, langs: ['en', 'fr'], callTimeoutMs: 10_000 });
    expect(second.calls[0]).toMatchObject({ status: 'ok', attempts: 1 });
    expect(second.forecasts.map((f) => [f.lang, f.reasoning, f.translation_of])).toEqual([
      ['en', 'Because.', null],
      ['fr', 'Parce que.', 'en'],
    ]);
  });

  it('a blank main reasoning is asked again, never stored as the forecast\'s reasoning; still blank, no forecast', async () => {
    // A required string a constrained decoder (or a JSON-mode model) fills with "" or whitespace:
    // vLLM's JSON-schema enforcement emitting empty values for required fields (noamgat/lm-format-enforcer#61).
    // The translations' rule (a blank one is a schema violation) did not cover the main language:
    // the reply was an ok call whose forecast was stored and served with an empty reasoning.
    const blank = (reasoning: string) => JSON.stringify({ probability: 0.65, reasoning, key_factors: [] });
    const model = await modelAnswering([
      json(completion(blank(''))),
      json(completion(FORECAST)),
      json(completion(blank(' \n '))),
      json(completion(blank(''))),
    ]);
    const first = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(first.calls[0]).toMatchObject({ status: 'ok', attempts: 2 });
    expect(first.forecasts.map((f) => f.reasoning)).toEqual(['Because.']);
    const second = await runForecasts({ models: [model], tasks: [task(2)], runId: 'r', asOf, callTimeoutMs: 10_000 });
    expect(second.calls[0]).toMatchObject({ status: 'failed', error_kind: 'schema_violation', attempts: 2 });
    expect(second.calls[0]!.error_message).toMatch(/reasoning: a blank reasoning/);
    expect(second.forecasts).toEqual([]);
  });

  it('a translation keyed by its language in another case or form is that language (QA: pt-BR for pt-br failed the call)', async () => {
    // A model in JSON mode (no schema sent) writes the code as it writes it: "pt-BR" asked as
    // "pt-br", "zh-Hant" asked as "zh-hant". It was a schema violation ("translations.pt-br:
    // expected object"), asked again and lost: the same language, the forecast thrown away.
    const model = await modelAnswering(() =>
      json(completion(JSON.stringify({
        probability: 0.65, reasoning: 'Because.', key_factors: ['a factor'],
        translations: { 'pt-BR': { reasoning: 'Porque.', key_factors: ['um fator'] }, 'zh-Hant': { reasoning: '因為。', key_factors: ['一個因素'] } },
      }))));
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, langs: ['en', 'pt-br', 'zh-hant'], callTimeoutMs: 10_000 });
    expect(out.calls[0]).toMatchObject({ status: 'ok', attempts: 1 });
    // stored under the codes the run asked for, as every other forecast of the run
    expect(out.forecasts.map((f) => [f.lang, f.reasoning, f.translation_of])).toEqual([
      ['en', 'Because.', null],
      ['pt-br', 'Porque.', 'en'],
      ['zh-hant', '因為。', 'en'],
    ]);
  });

  it('a missing translation is asked again, then recorded as missing naming the language; the forecast kept', async () => {
    const model = await modelAnswering(() => json(completion(FORECAST)));
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf, langs: ['en', 'fr'], callTimeoutMs: 10_000 });
    expect(out.calls[0]).toMatchObject({ status: 'ok', error_kind: null, attempts: 2 });
    expect(out.calls[0]!.error_message).toMatch(/^translations missing: fr /);
    expect(out.forecasts.map((f) => [f.lang, f.translation_of])).toEqual([['en', null]]);
  });
});

describe('runner: error bodies of OpenAI-compatible local servers', () => {
  it("a flat error body (vLLM before its {error: …} wrapper, FastChat, TensorRT-LLM's trtllm-serve) keeps the server's reason", async () => {
    // ErrorResponse of vllm/entrypoints/openai/protocol.py as it was (object "error", message, type, param, code at the
    // top level; FastChat's openai_api_protocol.py and TensorRT-LLM's openai_protocol.py keep the same shape): the SDK
    // finds no `error` member and the message was "400 status code (no body)", the reason lost (QA)
    const model = await modelAnswering([
      json({ object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 }, 400),
    ]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'other', attempts: 1 });
    expect(out.calls[0]!.error_message).toMatch(/^400 This model's maximum context length is 4096 tokens\./);
  });

  it("FastAPI's error body ({\"detail\": …}: vLLM's answer to a path it does not serve, a base_url without /v1) says what it says", async () => {
    // FastAPI's default 404 for an unknown route (fastapi/exception_handlers.py: {"detail": exc.detail}), what
    // vLLM's server (a FastAPI app) answers to POST /chat/completions when base_url lacks /v1; it was recorded
    // as "404 status code (no body)" (QA)
    const model = await modelAnswering([json({ detail: 'Not Found' }, 404)]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'other', attempts: 1, error_message: '404 Not Found' });
  });

  it('a flat error body with a 5xx is still retried and server_error, with its reason', async () => {
    const model = await modelAnswering([json({ object: 'error', message: 'The engine is dead.', type: 'InternalServerError', param: null, code: 500 }, 500)]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'server_error', attempts: 3, error_message: '500 The engine is dead.' });
  });
});

describe('runner: a reply whose content-type is not JSON', () => {
  it('a completion sent as text/plain (mistral.rs) or text/html (cortex.cpp) is read like any other: a forecast, costed from its usage', async () => {
    // the exchange of EricLBuehler/mistral.rs#79: `content-type: text/plain; charset=utf-8` over a chat.completion
    // (janhq/cortex.cpp#465: `text/html; charset=utf-8`). The SDK hands such a body back as a string: it was
    // recorded as invalid_json "reply has no choices", asked twice, and costed as nothing though both were generated (QA)
    const body = JSON.stringify(completion(FORECAST, { usage: { completion_tokens: 17, prompt_tokens: 13, total_tokens: 30, avg_tok_per_sec: 46.6563 } }));
    const model = await modelAnswering([
      { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body },
      { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body },
    ]);
    const out = await runForecasts({ models: [model], tasks: [task(1), task(2)], runId: 'r', asOf });
    for (const c of out.calls) expect(c).toMatchObject({ status: 'ok', attempts: 1, tokens_in: 13, tokens_out: 17, cost_usd: (13 * 2.5 + 17 * 10) / 1e6 });
    expect(out.forecasts.map((f) => f.probability)).toEqual([0.65, 0.65]);
  });

  it("a proxy's HTML page with status 200 is invalid_json that says what came, costed as a body that is not JSON", async () => {
    const page: ScriptedResponse = { status: 200, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please sign in to continue.</body></html>' };
    const model = await modelAnswering([page]);
    const out = await runForecasts({ models: [model], tasks: [task(1)], runId: 'r', asOf });
    expect(out.calls[0]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2, tokens_in: null });
    expect(out.calls[0]!.error_message).toMatch(/^reply body is not JSON: "<!DOCTYPE html><html><head><title>Sign in/);
    // the same cost as the same page sent as application/json (two prompts' input tokens, a lower bound)
    await server!.close();
    const asJson = await modelAnswering([{ ...page, headers: { 'content-type': 'application/json' } }]);
    const same = await runForecasts({ models: [asJson], tasks: [task(1)], runId: 'r', asOf });
    expect(same.calls[0]).toMatchObject({ status: 'failed', error_kind: 'invalid_json', attempts: 2 });
    expect(out.calls[0]!.cost_usd).toBeGreaterThan(0);
    expect(out.calls[0]!.cost_usd).toBe(same.calls[0]!.cost_usd);
  });
});
