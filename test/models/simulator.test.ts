import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPrompt, simulateAnswer } from '../../pipeline/simulator/answer.ts';
import { parseFaultRules, startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';

const prompt = (market?: number) =>
  [
    'Question: Will it rain in Lisbon on 1 January 2026?',
    'Resolution criteria:',
    'Any measurable rain.',
    ...(market === undefined ? [] : ['Prediction market:', `Current market probability of YES: ${(market * 100).toFixed(1)}% (observed 2025-10-26 10:00 UTC)`]),
  ].join('\n');

describe('simulateAnswer', () => {
  it('is deterministic and depends on the model', () => {
    const a = simulateAnswer('sim-gpt', prompt());
    expect(simulateAnswer('sim-gpt', prompt())).toEqual(a);
    const ps = ['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek'].map((m) => simulateAnswer(m, prompt()).probability);
    expect(new Set(ps).size).toBeGreaterThan(1);
    expect(a.reasoning).toMatch(/simulat/i);
    expect(a.key_factors.length).toBeGreaterThan(0);
  });

  it('reads the market line and shrinks toward it', () => {
    expect(readPrompt(prompt(0.8)).marketProbability).toBeCloseTo(0.8);
    expect(readPrompt(prompt()).marketProbability).toBeNull();
    for (const m of [0.05, 0.3, 0.7, 0.95]) {
      for (const model of ['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek']) {
        expect(Math.abs(simulateAnswer(model, prompt(m)).probability - m)).toBeLessThan(0.15);
      }
    }
  });

  it('spreads blind answers over the probability range', () => {
    const ps = Array.from({ length: 400 }, (_, i) => simulateAnswer('sim-gpt', `Question: q${i}?`).probability);
    expect(Math.min(...ps)).toBeLessThan(0.15);
    expect(Math.max(...ps)).toBeGreaterThan(0.8);
    for (const p of ps) expect(p >= 0.01 && p <= 0.99).toBe(true);
  });
});

describe('simulateAnswer: languages', () => {
  const withLangs = (main: string, extra: string[] = []) =>
    `${prompt(0.4)}\n- Write the reasoning in X (language code: ${main}).${extra.length ? `\n- Additional languages: ${extra.map((l) => `${l} (Name)`).join(', ')}.` : ''}`;

  it('answers in the requested language with the same probability', () => {
    const en = simulateAnswer('sim-gpt', withLangs('en'));
    const fr = simulateAnswer('sim-gpt', withLangs('fr'));
    const xx = simulateAnswer('sim-gpt', withLangs('sw'));
    expect(fr.probability).toBe(en.probability);
    expect(xx.probability).toBe(en.probability);
    expect(fr.reasoning).toMatch(/^Prévision simulée/);
    expect(xx.reasoning).toMatch(/^\[sw\] Simulated forecast/);
    expect(en.translations).toBeUndefined();
  });

  it('adds the translations asked for', () => {
    const a = simulateAnswer('sim-claude', withLangs('en', ['de', 'es']));
    expect(Object.keys(a.translations!)).toEqual(['de', 'es']);
    expect(a.translations!.de!.reasoning).toMatch(/Simulierte Prognose/);
    expect(a.translations!.es!.key_factors[0]).toMatch(/respuesta simulada/);
    expect(readPrompt(withLangs('en', ['de', 'pt-BR'])).extraLangs).toEqual(['de', 'pt-BR']);
  });
});

describe('fault rules from configuration', () => {
  it('parses JSON rules and names bad ones', () => {
    expect(parseFaultRules('[{"kind":"rate_limit","fraction":0.1,"retryAfterSeconds":2},{"kind":"truncated_body","model":"sim-gpt"}]')).toHaveLength(2);
    expect(() => parseFaultRules('[{"kind":"explode"}]')).toThrow(/0\.kind/);
    expect(() => parseFaultRules('[{"kind":"hang","bogus":1}]')).toThrow(/bogus|Unrecognized/);
    expect(() => parseFaultRules('{not json')).toThrow(/not valid JSON/);
  });
});

describe('simulator HTTP server', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0 });
  });
  afterAll(() => sim.close());

  const post = (body: unknown) =>
    fetch(`${sim.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('listens on loopback with a /v1 base URL', () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('answers a chat completion in the OpenAI shape, deterministically', async () => {
    const body = { model: 'sim-claude', messages: [{ role: 'user', content: prompt(0.4) }] };
    const res = await post(body);
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    expect(json).toMatchObject({
      object: 'chat.completion',
      model: 'sim-claude',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
    });
    expect(typeof json.id).toBe('string');
    expect(typeof json.created).toBe('number');
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens);
    const content = JSON.parse(json.choices[0].message.content);
    expect(content).toEqual(simulateAnswer('sim-claude', prompt(0.4)));
    const again = (await (await post(body)).json()) as any;
    expect(again.choices[0].message.content).toBe(json.choices[0].message.content);
  });

  it('lists models, and rejects bad requests like the API does', async () => {
    const models = (await (await fetch(`${sim.url}/models`)).json()) as any;
    expect(models.object).toBe('list');
    expect(models.data.map((m: any) => m.id)).toContain('sim-gpt');
    const bad = await post({ messages: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.type).toBe('invalid_request_error');
    expect((await fetch(`${sim.url}/nope`)).status).toBe(404);
  });

  it('injects faults by marker, with a Retry-After on 429', async () => {
    sim.setFaults([{ kind: 'rate_limit', marker: 'RL-MARK', retryAfterSeconds: 7 }]);
    const res = await post({ model: 'sim-gpt', messages: [{ role: 'user', content: 'Question: x RL-MARK' }] });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    const ok = await post({ model: 'sim-gpt', messages: [{ role: 'user', content: 'Question: x' }] });
    expect(ok.status).toBe(200);
    expect(sim.stats().faults.rate_limit).toBe(1);
    sim.setFaults([]);
  });

  it('cuts the HTTP body mid-way (truncated_body), only for the named model', async () => {
    sim.setFaults([{ kind: 'truncated_body', model: 'sim-gemini' }]);
    try {
      const ok = await post({ model: 'sim-gpt', messages: [{ role: 'user', content: 'Question: z' }] });
      expect(ok.status).toBe(200);
      await ok.json();
      const cut = await post({ model: 'sim-gemini', messages: [{ role: 'user', content: 'Question: z' }] });
      expect(cut.status).toBe(200);
      await expect(cut.text()).rejects.toThrow();
    } finally {
      sim.setFaults([]);
    }
  });

  it('adds latency with seeded jitter', async () => {
    const slow = await startSimulator({ port: 0, latencyMs: 60, jitterMs: 40 });
    try {
      const times: number[] = [];
      for (let i = 0; i < 4; i++) {
        const t0 = performance.now();
        const r = await fetch(`${slow.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'sim-gpt', messages: [{ role: 'user', content: 'Question: q' }] }),
        });
        await r.json();
        times.push(performance.now() - t0);
      }
      for (const t of times) {
        expect(t).toBeGreaterThanOrEqual(58);
        expect(t).toBeLessThan(1500);
      }
    } finally {
      await slow.close();
    }
  });

  it('truncates at max_completion_tokens with finish_reason length', async () => {
    const res = await post({ model: 'sim-gpt', max_completion_tokens: 5, messages: [{ role: 'user', content: 'Question: y' }] });
    const json = (await res.json()) as any;
    expect(json.choices[0].finish_reason).toBe('length');
  });
});
