/**
 * Units of the API product: key format and generation, header parsing, ETag matching, the
 * entitlement table, plan limits from the environment, the usage store's day files.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENTITLEMENTS, assertEntitled, isPublic, requiredPlan } from '../../api/auth/entitlements.ts';
import { KeyStore, createKey, generateKey, isWellFormedKey, revokeKey, sha256Hex } from '../../api/auth/keys.ts';
import { presentedKey } from '../../api/auth/middleware.ts';
import { ifNoneMatch } from '../../api/cache/response-cache.ts';
import { ApiError } from '../../api/errors/problem.ts';
import { UsageStore } from '../../api/limits/usage-store.ts';
import { QuotaKeeper } from '../../api/limits/quota.ts';
import { DEFAULT_LIMITS } from '../../api/auth/plans.ts';
import type { Response } from 'express';
import { silentLogger } from '../../api/logging/logger.ts';
import { ROUTES } from '../../api/routes/index.ts';
import { nextRunFromCron } from '../../api/server.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { loadEventsConfig } from '../../pipeline/events/config.ts';
import { checkStageSettings } from '../../pipeline/stage-settings.ts';
import { parseUsd } from '../../pipeline/cli/options.ts';

describe('keys', () => {
  it('qrm_ + 32 base62, uniform-ish, unique', () => {
    const keys = Array.from({ length: 2000 }, generateKey);
    for (const k of keys) expect(isWellFormedKey(k)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const k of keys) for (const c of k.slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (2000 * 32) / 62;
    for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.25);
  });

  it('malformed shapes are rejected before hashing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        expect(isWellFormedKey(s)).toBe(/^qrm_[0-9A-Za-z]{32}$/.test(s));
      }),
    );
  });

  it('store: create, lookup, revoke; a corrupt file keeps the previous keys', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-keys-'));
    try {
      const errors: unknown[] = [];
      const store = new KeyStore(dir, { recheckMs: 0, onError: (e) => errors.push(e) });
      const { key, record } = createKey(dir, { name: 'a', plan: 'api', scopes: ['probability'] });
      expect(record.sha256).toBe(sha256Hex(key));
      expect(store.lookup(key)).toMatchObject({ ok: true, record: { id: record.id, plan: 'api' } });
      expect(store.lookup(`qrm_${'0'.repeat(32)}`)).toEqual({ ok: false, reason: 'unknown' });
      expect(store.lookup('nope')).toEqual({ ok: false, reason: 'malformed' });
      const text = await readFile(path.join(dir, 'state', 'keys.json'), 'utf8');
      expect(text).not.toContain(key);
      revokeKey(dir, record.id);
      expect(store.lookup(key)).toEqual({ ok: false, reason: 'revoked' });
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path.join(dir, 'state', 'keys.json'), '{not json');
      expect(store.lookup(key)).toEqual({ ok: false, reason: 'revoked' });
      expect(errors.length).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('header parsing', () => {
    const k = generateKey();
    expect(presentedKey(undefined, undefined)).toBeUndefined();
    expect(presentedKey(k, undefined)).toBe(k);
    expect(presentedKey(undefined, `Bearer ${k}`)).toBe(k);
    expect(presentedKey(undefined, `bEaReR\t${k}`)).toBe(k);
    expect(presentedKey(k, `Bearer ${k}`)).toBe(k);
    for (const [x, a] of [['', undefined], [undefined, 'Bearer'], [undefined, 'Basic abc'], [[k, k], undefined], [k, `Bearer ${k}x`]] as const) {
      expect(() => presentedKey(x as any, a)).toThrow(ApiError);
    }
  });
  it('a key in quotes (`jq .key` without -r) or after "Bearer " in X-API-Key is a 401 saying so, never echoing the key (QA: "The API key is malformed.")', () => {
    const k = generateKey();
    const detail = (x: string | undefined, a: string | undefined): string => {
      try {
        presentedKey(x, a);
      } catch (err) {
        return (err as ApiError).detail;
      }
      return 'accepted';
    };
    for (const [x, a] of [[`"${k}"`, undefined], [` '${k}' `, undefined], [undefined, `Bearer "${k}"`]] as const) {
      const d = detail(x, a);
      expect(d).toMatch(/in quotes: send it without them/);
      expect(d).not.toContain(k.slice(4));
    }
    for (const x of [`Bearer ${k}`, `bearer  ${k}`]) {
      const d = detail(x, undefined);
      expect(d).toMatch(/X-API-Key takes the key alone, without "Bearer "/);
      expect(d).not.toContain(k.slice(4));
    }
    expect(detail('"not a key"', undefined)).toBe('accepted'); // anything else: looked up, a malformed key
  });
});

describe('entitlements: one table', () => {
  it('every registered route has a row; plan contents follow the spec', () => {
    for (const r of ROUTES) expect(Object.hasOwn(ENTITLEMENTS, r.id), r.id).toBe(true);
    expect(requiredPlan('predictions.accuracy', true)).toBeNull();
    expect(requiredPlan('predictions.accuracy', false)).toBe('pro');
    expect(requiredPlan('predictions.edges', true)).toBeNull(); // a public read of the spec's table (issue 9)
    expect(requiredPlan('predictions.edges', false)).toBe('pro');
    expect(requiredPlan('leaderboard', true)).toBe('api');
    expect(requiredPlan('export.bulk', true)).toBe('api');
    expect(requiredPlan('raw.tables', true)).toBe('enterprise');
    expect(isPublic('health.live', false)).toBe(true);
    const anon = { plan: 'anonymous' as const, keyId: null, scopes: [] };
    const pro = { plan: 'pro' as const, keyId: 'key_x', scopes: [] };
    expect(() => assertEntitled('usage', anon, true)).toThrow(expect.objectContaining({ status: 401 }));
    expect(() => assertEntitled('claims', pro, true)).toThrow(expect.objectContaining({ status: 403, extras: { plan: 'api' } }));
    expect(() => assertEntitled('probability', { ...pro, plan: 'enterprise' }, true)).toThrow(expect.objectContaining({ status: 403 }));
    expect(() => assertEntitled('probability', { ...pro, scopes: ['probability'] }, true)).not.toThrow();
  });
});

describe('conditional requests', () => {
  it('If-None-Match weak comparison', () => {
    expect(ifNoneMatch(undefined, '"a"')).toBe(false);
    expect(ifNoneMatch('"a"', '"a"')).toBe(true);
    expect(ifNoneMatch('W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatch('"b", "a"', '"a"')).toBe(true);
    expect(ifNoneMatch('*', '"a"')).toBe(true);
    expect(ifNoneMatch('"b"', '"a"')).toBe(false);
    expect(ifNoneMatch('a', '"a"')).toBe(false);
  });
});

describe('configuration', () => {
  it('plan limits, beta, CORS from the environment; 0 = unlimited', () => {
    const d = loadConfig({});
    expect(d.publicBeta).toBe(true);
    expect(d.limits).toEqual({ anonymousPerHour: 100, proPerDay: 1000, apiPerDay: 50_000, enterprisePerDay: null, probabilityPerDay: 100 });
    expect(d.corsOrigins).toBe('*');
    const c = loadConfig({
      QUORUM_PUBLIC_BETA: 'false', QUORUM_LIMIT_PRO_PER_DAY: '5', QUORUM_LIMIT_ANONYMOUS_PER_HOUR: '0',
      QUORUM_CORS_ORIGINS: 'https://a.example, https://b.example', QUORUM_TRUST_PROXY: '1',
    });
    expect(c.publicBeta).toBe(false);
    expect(c.limits.proPerDay).toBe(5);
    expect(c.limits.anonymousPerHour).toBeNull();
    expect(c.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(c.trustProxy).toBe(1);
    expect(() => loadConfig({ QUORUM_PUBLIC_BETA: 'maybe' })).toThrow(/QUORUM_PUBLIC_BETA/);
    expect(() => loadConfig({ QUORUM_LIMIT_API_PER_DAY: '-1' })).toThrow(/QUORUM_LIMIT_API_PER_DAY/);
  });

  it('QUORUM_TRUST_PROXY=true is refused: with it any client picked its own address in X-Forwarded-For (QA: no anonymous or key-guessing limit held)', () => {
    expect(() => loadConfig({ QUORUM_TRUST_PROXY: 'true' })).toThrow(/QUORUM_TRUST_PROXY: true would take the client address from the first X-Forwarded-For entry.*number of proxies/);
    expect(loadConfig({ QUORUM_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ QUORUM_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(() => loadConfig({ QUORUM_TRUST_PROXY: 'yes' })).toThrow(/QUORUM_TRUST_PROXY: expected false or a hop count/);
  });

  it('paths and the host are trimmed (QA: " /tmp/x " made a warehouse named so under the current directory)', () => {
    const c = loadConfig({ QUORUM_DATA_DIR: ' /tmp/quorum-trimmed ', HOST: ' 127.0.0.1 ', QUORUM_QUESTIONS_DIR: '\t/tmp/q\t', QUORUM_SAMPLE_DIR: ' /tmp/s' });
    expect([c.dataDir, c.host, c.questionsDir, c.sampleDir]).toEqual(['/tmp/quorum-trimmed', '127.0.0.1', '/tmp/q', '/tmp/s']);
  });

  it('an integer setting is digits only, wherever it is read (QA: PORT=1e3 was port 1000, 0x50 port 80)', () => {
    for (const bad of ['1e3', '0x50', '0b1', '80.0', '-1', '+80', '8 0']) {
      expect(() => loadConfig({ PORT: bad }), bad).toThrow(/PORT: expected a whole number \(digits only\)/);
    }
    expect(loadConfig({ PORT: ' 8080 ' }).port).toBe(8080);
    expect(() => loadConfig({ PORT: '65536' })).toThrow(/PORT/);
    expect(() => loadConfig({ QUORUM_VENUE_RETRIES: '1e0' })).toThrow(/QUORUM_VENUE_RETRIES: expected a whole number/);
    expect(() => loadEventsConfig({ QUORUM_STREAM_MAX_CLIENTS: '2e3' })).toThrow(/QUORUM_STREAM_MAX_CLIENTS/);
    expect(() => checkStageSettings({ QUORUM_SCENARIO_IPF_SWEEPS: '0x10' })).toThrow(/QUORUM_SCENARIO_IPF_SWEEPS: expected a whole number/);
    // (FRED's client settings are checked at start with its URL and key: `quorum sync` reads them)
    expect(() => checkStageSettings({ QUORUM_FRED_RETRIES: '4.0' })).toThrow(/invalid configuration:\s+QUORUM_FRED_RETRIES: expected a whole number/);
    expect(() => checkStageSettings({ QUORUM_FRED_TIMEOUT_MS: '0' })).toThrow(/invalid configuration:\s+QUORUM_FRED_TIMEOUT_MS: .*got "0"/);
    // A decimal setting keeps decimal notation.
    expect(loadConfig({ QUORUM_MAX_COMPARATOR_AGE_DAYS: '1.5' }).maxComparatorAgeDays).toBe(1.5);
  });

  it('--budget-usd takes an amount in decimal notation, .5 too (QA: refused)', () => {
    expect(['2.50', '0.5', '.5', '3', '3.'].map(parseUsd)).toEqual([2.5, 0.5, 0.5, 3, 3]);
    for (const bad of ['', '.', '-1', '1e2', '0x1', 'five', '1,5']) expect(() => parseUsd(bad), bad).toThrow('expected an amount in USD');
  });

  it('CORS origins must be origins a browser sends: scheme, host, port, nothing after', () => {
    expect(loadConfig({ QUORUM_CORS_ORIGINS: 'http://localhost:3000,https://app.example' }).corsOrigins).toEqual([
      'http://localhost:3000',
      'https://app.example',
    ]);
    expect(loadConfig({ QUORUM_CORS_ORIGINS: ' * ' }).corsOrigins).toBe('*');
    // each of these would never equal a request's Origin header: refused at start, named
    for (const bad of ['app.example', 'https://app.example/', 'https://app.example/path', 'ftp://app.example', 'https://a.example:443', ',', '*,https://a.example']) {
      expect(() => loadConfig({ QUORUM_CORS_ORIGINS: bad }), bad).toThrow(/QUORUM_CORS_ORIGINS/);
    }
    expect(() => loadConfig({ QUORUM_CORS_ORIGINS: 'https://ok.example, app.example' })).toThrow(/"app\.example" is not an origin/);
    // one a browser would send written otherwise is refused saying what to write (QA: only "is not
    // an origin" for HTTPS://App.Example, a default port or a trailing slash, which look like one)
    for (const [near, origin] of [['HTTPS://App.Example', 'https://app.example'], ['https://a.example:443', 'https://a.example'], ['https://app.example/', 'https://app.example'], ['http://LOCALHOST:3000', 'http://localhost:3000']]) {
      expect(() => loadConfig({ QUORUM_CORS_ORIGINS: near }), near).toThrow(`QUORUM_CORS_ORIGINS: ${JSON.stringify(near)} is not an origin as a browser sends it: write ${JSON.stringify(origin)}`);
    }
  });

  it('next run from the cron schedule (Cache-Control)', () => {
    const { nextRunAt, stop } = nextRunFromCron('0 */4 * * *');
    const next = nextRunAt()!;
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(4 * 3600_000);
    expect(next.getUTCHours() % 4).toBe(0);
    expect(next.getUTCMinutes()).toBe(0);
    stop();
  });
});

describe('usage store', () => {
  it('counts per day, flushes atomically, reloads, rolls over at UTC midnight', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-usage-'));
    try {
      let now = Date.parse('2025-04-01T23:59:59Z');
      const u = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      u.count('key_a', 'requests');
      u.count('key_a', 'requests');
      u.countRoute('key_a', 'predictions.accuracy');
      await u.flushAsync();
      const again = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      expect(again.get('key_a')).toMatchObject({ requests: 2, routes: { 'predictions.accuracy': 1 } });
      now += 2000; // next day
      expect(u.get('key_a').requests).toBe(0);
      u.count('key_a', 'requests');
      await u.close();
      const day1 = JSON.parse(await readFile(path.join(dir, 'state', 'usage', '2025-04-01.json'), 'utf8'));
      const day2 = JSON.parse(await readFile(path.join(dir, 'state', 'usage', '2025-04-02.json'), 'utf8'));
      expect(day1.keys.key_a.requests).toBe(2);
      expect(day2.keys.key_a.requests).toBe(1);
      const hist = await u.history('key_a', 30);
      expect(hist.map((h) => [h.date, h.requests])).toEqual([['2025-04-02', 1], ['2025-04-01', 2]]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a closed day\'s file is read once: the history answers from memory after (QA: every GET /api/usage/, uncharged, read and parsed up to 89 files of every key)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-usage-days-'));
    try {
      let now = Date.parse('2025-04-01T12:00:00Z');
      const u = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      u.count('key_a', 'requests');
      u.count('key_a', 'rejected');
      now += 86_400_000; // 2025-04-02: the 1st closed by this process, its final counts kept
      u.count('key_a', 'requests');
      u.count('key_a', 'requests');
      now += 86_400_000; // 2025-04-03
      await u.close();
      const v = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      const first = await v.history('key_a', 30);
      expect(first.map((h) => [h.date, h.requests, h.rejected])).toEqual([['2025-04-03', 0, 0], ['2025-04-02', 2, 0], ['2025-04-01', 1, 1]]);
      // the closed days' files changed behind its back (they never do): the same history, read once
      const day1 = path.join(dir, 'state', 'usage', '2025-04-01.json');
      await writeFile(day1, JSON.stringify({ version: 1, date: '2025-04-01', keys: { key_a: { requests: 99, rejected: 0, probability: 0, routes: {} } } }));
      expect(await v.history('key_a', 30)).toEqual(first);
      await v.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('history(days) covers the last `days` calendar days, not the last `days` day files (QA: with days without a file, ?days=2 listed a day 40 days back)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-usage-gap-'));
    try {
      let now = Date.parse('2025-03-01T12:00:00Z');
      const u = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      u.count('key_a', 'requests'); // 2025-03-01
      now = Date.parse('2025-04-05T12:00:00Z'); // no request (no file) in between
      u.count('key_a', 'requests');
      u.count('key_a', 'requests'); // 2025-04-05
      now = Date.parse('2025-04-10T12:00:00Z');
      u.count('key_a', 'requests'); // 2025-04-10, today
      const dates = async (days: number) => (await u.history('key_a', days)).map((h) => h.date);
      expect(await dates(1)).toEqual(['2025-04-10']);
      expect(await dates(2)).toEqual(['2025-04-10']); // 04-09 had no request; 03-01 is 40 days back
      expect(await dates(5)).toEqual(['2025-04-10']);
      expect(await dates(6)).toEqual(['2025-04-10', '2025-04-05']);
      expect(await dates(40)).toEqual(['2025-04-10', '2025-04-05']);
      expect(await dates(41)).toEqual(['2025-04-10', '2025-04-05', '2025-03-01']);
      await u.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a request charged before UTC midnight and refused after it takes nothing back from the new day (QA: it erased a request of the new day, a free one)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-usage-refuse-'));
    try {
      let now = Date.parse('2025-04-01T23:59:59.500Z');
      const u = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      const q = new QuotaKeeper({ ...DEFAULT_LIMITS, proPerDay: 10 }, u);
      const auth = { plan: 'pro' as const, keyId: 'key_a', scopes: [] };
      const fakeRes = () => ({ locals: {} as Record<string, unknown>, setHeader: () => undefined, getHeader: () => undefined }) as unknown as Response;
      const late = fakeRes();
      late.locals.routeId = 'export.predictions';
      q.charge(late, auth, '192.0.2.1'); // an export charged at 23:59:59.5 waits for a slot...
      u.countRoute('key_a', 'export.predictions');
      now += 1000; // 2025-04-02
      const next = fakeRes();
      q.charge(next, auth, '192.0.2.1');
      u.countRoute('key_a', 'predictions.accuracy');
      q.refuseCharged(late, auth); // ... and is refused (429) after midnight
      expect(u.get('key_a')).toEqual({ requests: 1, rejected: 1, probability: 0, routes: { 'predictions.accuracy': 1 } });
      // the same day: taken back as before
      const same = fakeRes();
      same.locals.routeId = 'export.predictions';
      q.charge(same, auth, '192.0.2.1');
      u.countRoute('key_a', 'export.predictions');
      q.refuseCharged(same, auth);
      expect(u.get('key_a')).toEqual({ requests: 1, rejected: 2, probability: 0, routes: { 'predictions.accuracy': 1 } });
      await u.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a periodic flush still writing when the UTC day ends cannot overwrite the day\'s final counts with older ones (QA)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'quorum-usage-roll-'));
    try {
      let now = Date.parse('2025-04-01T23:59:59Z');
      const u = new UsageStore(dir, { logger: silentLogger(), flushMs: 0, now: () => now });
      u.count('key_a', 'requests');
      const periodic = u.flushAsync(); // writes 1 request, asynchronously
      u.count('key_a', 'requests');
      u.count('key_a', 'requests');
      now += 2000; // the day ends while that write is under way: its final counts are written at once
      expect(u.get('key_a').requests).toBe(0);
      await periodic;
      await u.close();
      const day1 = JSON.parse(await readFile(path.join(dir, 'state', 'usage', '2025-04-01.json'), 'utf8'));
      expect(day1.keys.key_a.requests).toBe(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
