/**
 * A loopback OpenAI-compatible server whose models give scripted replies: what the simulator never
 * answers (a probability below 0.001, a reply without a requested translation), for the probability
 * endpoint's tests. `POST /v1/chat/completions` answers a chat completion as OpenAI documents it
 * (platform.openai.com/docs/api-reference/chat/object) whose content is the reply scripted for the
 * request's `model`; an unscripted model is a 404 OpenAI error body.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ResolvedModel } from '../../pipeline/models/config.ts';

/** A model's reply content (the forecast JSON the runner parses). */
export interface ScriptedReply {
  probability: number;
  reasoning: string;
  key_factors: string[];
  translations?: Record<string, { reasoning: string; key_factors: string[] }>;
}

export interface ScriptedModels {
  /** The configured models, one per scripted reply, with the template's limits and prices. */
  models: ResolvedModel[];
  /** Chat completion requests received, per model. */
  requests: Map<string, number>;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (port 0); `template` gives the other fields of each configured model. */
export async function startScriptedModels(replies: Record<string, ScriptedReply>, template: ResolvedModel): Promise<ScriptedModels> {
  const requests = new Map<string, number>();
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const model = String((JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { model?: unknown }).model);
      requests.set(model, (requests.get(model) ?? 0) + 1);
      const reply = replies[model];
      res.setHeader('content-type', 'application/json');
      if (!reply) {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { message: `The model ${model} does not exist`, type: 'invalid_request_error', code: 'model_not_found' } }));
        return;
      }
      res.end(JSON.stringify({
        id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', object: 'chat.completion', created: 1741569952, model,
        choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(reply), refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      }));
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`;
  return {
    models: Object.keys(replies).map((name) => ({ ...template, id: name, model: name, base_url: url })),
    requests,
    close: () => new Promise<void>((resolve) => srv.close(() => resolve())),
  };
}
