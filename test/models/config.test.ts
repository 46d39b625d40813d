import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadModelsConfig,
  ModelsConfigError,
  providerFromBaseUrl,
  SIMULATED_PROVIDER,
} from '../../pipeline/models/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'quorum-models-'));
function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

const good = {
  id: 'gpt-x',
  display_name: 'GPT X',
  base_url: 'https://api.openai.com/v1',
  api_key_env: 'TEST_OPENAI_KEY',
  model: 'gpt-x',
  max_concurrency: 4,
  requests_per_minute: 60,
  price_in_per_mtok: 1,
  price_out_per_mtok: 2,
};

describe('loadModelsConfig', () => {
  it('without a file gives the four simulated models at the simulator URL', () => {
    const models = loadModelsConfig({ env: {}, simulatorUrl: 'http://127.0.0.1:1234/v1' });
    expect(models.map((m) => m.id)).toEqual(['sim-gpt', 'sim-claude', 'sim-gemini', 'sim-deepseek']);
    for (const m of models) {
      expect(m.provider).toBe(SIMULATED_PROVIDER);
      expect(m.base_url).toBe('http://127.0.0.1:1234/v1');
      expect(m.display_name).toMatch(/simulated/i);
    }
  });

  it('without a file or a simulator is an error', () => {
    expect(() => loadModelsConfig({ env: {} })).toThrow(/QUORUM_MODELS_FILE/);
  });

  it('reads QUORUM_MODELS_FILE, resolves keys and providers', () => {
    const p = file('ok.json', {
      $comment: 'doc',
      models: [good, { ...good, id: 'local-llama', base_url: 'http://localhost:8080/v1', provider: undefined }],
    });
    const models = loadModelsConfig({ env: { QUORUM_MODELS_FILE: p, TEST_OPENAI_KEY: 'sk-1' } });
    expect(models).toHaveLength(2);
    expect(models[0]).toMatchObject({ id: 'gpt-x', provider: 'openai', apiKey: 'sk-1', response_format: 'json_schema' });
    expect(models[1]!.provider).toBe('local');
  });

  it('names the missing (or blank) API key variable', () => {
    const p = file('nokey.json', { models: [good] });
    expect(() => loadModelsConfig({ file: p, env: {} })).toThrow(ModelsConfigError);
    expect(() => loadModelsConfig({ file: p, env: {} })).toThrow(/TEST_OPENAI_KEY is not set/);
    // blank is unset, as for every variable; a key is read trimmed
    expect(() => loadModelsConfig({ file: p, env: { TEST_OPENAI_KEY: '  ' } })).toThrow(/TEST_OPENAI_KEY is not set/);
    expect(loadModelsConfig({ file: p, env: { TEST_OPENAI_KEY: 'sk-abc\r' } })[0]!.apiKey).toBe('sk-abc');
  });

  it('an API key fetch cannot send in a header is refused, naming its variable, not its value (a line break inside, or a character beyond Latin-1: every call failed unsent)', () => {
    const p = file('badkey.json', { models: [good] });
    for (const key of ['sk-abc\ndef', 'sk-abc\u2028def']) {
      expect(() => loadModelsConfig({ file: p, env: { TEST_OPENAI_KEY: key } })).toThrow(
        /models\[0\] \(gpt-x\): environment variable TEST_OPENAI_KEY: .*a line break, a NUL or a character beyond Latin-1.*\(value not shown, 10 characters\)/,
      );
    }
  });

  it('names the file and the bad field', () => {
    const p = file('bad.json', { models: [{ ...good, max_concurrency: 0 }] });
    let msg = '';
    try {
      loadModelsConfig({ file: p, env: { TEST_OPENAI_KEY: 'k' } });
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toContain(p);
    expect(msg).toContain('models[0].max_concurrency');
  });

  it('refuses a timeout_ms no timer can hold, naming the field (QA: 3000000000 failed every call at once as a timeout)', () => {
    // Node.js clamps a timer past 2^31 - 1 ms (24.8 days) to 1 ms (TimeoutOverflowWarning): a "no limit" of
    // 3000000000 ms was accepted and every call of the model failed in a millisecond, "no valid reply within
    // the 3000000000 ms deadline"
    const p = file('huge-timeout.json', { models: [{ ...good, timeout_ms: 3_000_000_000 }] });
    expect(() => loadModelsConfig({ file: p, env: { TEST_OPENAI_KEY: 'k' } })).toThrow(/models\[0\]\.timeout_ms \(line \d+\): .*2147483647/);
    const ok = file('long-timeout.json', { models: [{ ...good, timeout_ms: 2_147_483_647 }] });
    expect(loadModelsConfig({ file: ok, env: { TEST_OPENAI_KEY: 'k' } })[0]!.timeout_ms).toBe(2_147_483_647);
  });

  it('rejects unknown fields, duplicate ids, invalid JSON and missing files', () => {
    const env = { TEST_OPENAI_KEY: 'k' };
    expect(() => loadModelsConfig({ file: file('extra.json', { models: [{ ...good, temprature: 1 }] }), env })).toThrow(
      /temprature/,
    );
    expect(() => loadModelsConfig({ file: file('dup.json', { models: [good, good] }), env })).toThrow(
      /models\[1\]\.id \(line 1\): duplicate model id/,
    );
    expect(() => loadModelsConfig({ file: file('slug.json', { models: [{ ...good, id: 'gpt-4.1' }, { ...good, id: 'gpt-4-1' }] }), env })).toThrow(
      /models\[1\]\.id \(line 1\): model id "gpt-4-1" and "gpt-4.1" differ only in '.', '_' or '-': their track records would be one source, ai-gpt-4-1/,
    );
    expect(() => loadModelsConfig({ file: file('broken.json', '{"models": ['), env })).toThrow(/not valid JSON/);
    expect(() => loadModelsConfig({ file: join(dir, 'absent.json'), env })).toThrow(/absent\.json: cannot be read/);
    expect(() => loadModelsConfig({ file: file('url.json', { models: [{ ...good, base_url: 'ftp://x' }] }), env })).toThrow(
      /models\[0\]\.base_url/,
    );
    // the OpenAI SDK sends with fetch, which refuses a URL holding credentials; and it appends its
    // paths (/chat/completions) to the base URL, inside a query or fragment (as the QUORUM_*_URL settings)
    expect(() => loadModelsConfig({ file: file('cred.json', { models: [{ ...good, base_url: 'https://u:p@api.openai.com/v1' }] }), env })).toThrow(
      /models\[0\]\.base_url \(line 1\): a base URL may not hold a user name or password/,
    );
    expect(() => loadModelsConfig({ file: file('query.json', { models: [{ ...good, base_url: 'https://api.openai.com/v1?api-version=1' }] }), env })).toThrow(
      /models\[0\]\.base_url \(line 1\): a base URL may not have a query or fragment/,
    );
  });

  it('names the line of each problem: a syntax error, a bad, unknown or missing field (QA: "at position 1187", or a field path alone, to be counted out by hand)', () => {
    const env = { TEST_OPENAI_KEY: 'k' };
    const { price_out_per_mtok: _missing, ...noPrice } = good;
    // As an operator writes it: two-space indent, one field a line (data/models.example.json's layout).
    const text = JSON.stringify({ models: [good, { ...good, id: 'b', max_concurrency: 0, temprature: 1 }, { ...noPrice, id: 'c' }] }, null, 2);
    const lineOf = (needle: string, from = 0) => text.split('\n').findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    const second = lineOf('"id": "b"');
    let msg = '';
    try {
      loadModelsConfig({ file: file('lines.json', text), env });
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toContain(`models[1].max_concurrency (line ${lineOf('"max_concurrency": 0')}): Too small`);
    expect(msg).toContain(`models[1].temprature (line ${lineOf('"temprature"')}): Unrecognized key`);
    expect(msg).toContain(`models[2].price_out_per_mtok (line ${lineOf('{', second + 1)}): Invalid input`); // missing: its entry's line
    // A trailing comma (JSON.parse in Node 20 says only "at position N").
    const comma = text.replace('"price_out_per_mtok": 2\n', '"price_out_per_mtok": 2,\n');
    const line = comma.split('\n').findIndex((l) => l.includes('"price_out_per_mtok": 2,')) + 2;
    expect(() => loadModelsConfig({ file: file('comma.json', comma), env })).toThrow(new RegExp(`not valid JSON \\(.*line ${line} column \\d+`));
  });

  it('loads the documented example when its keys are set', () => {
    const env = { OPENAI_API_KEY: 'a', ANTHROPIC_API_KEY: 'b', GEMINI_API_KEY: 'c', DEEPSEEK_API_KEY: 'd' };
    const models = loadModelsConfig({ file: 'data/models.example.json', env });
    expect(models.map((m) => m.provider)).toEqual(['openai', 'anthropic', 'google', 'deepseek']);
  });
});

describe('providerFromBaseUrl', () => {
  it.each([
    ['https://api.x.ai/v1', 'xai'],
    ['https://generativelanguage.googleapis.com/v1beta/openai/', 'google'],
    ['http://127.0.0.1:11434/v1', 'local'],
    ['https://llm.example.com/v1', 'example'],
  ])('%s → %s', (url, provider) => {
    expect(providerFromBaseUrl(url)).toBe(provider);
  });
  it('labels the simulator URL simulated', () => {
    expect(providerFromBaseUrl('http://127.0.0.1:9/v1/', 'http://127.0.0.1:9/v1')).toBe('simulated');
  });
});
