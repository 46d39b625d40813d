/**
 * Webhooks (issue 15 points 3-5) against real servers and real receivers on 127.0.0.1: every
 * delivery's signature is verified with the independent `standardwebhooks` package (a rotated
 * secret too); receivers answering 500, 429 with Retry-After, 410 and never; a server process
 * SIGKILLed mid-delivery and restarted delivers every event at least once, duplicates sharing
 * their webhook-id. URL policy: https only, no private/loopback/link-local address unless allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import type { ServerHandle } from '../../api/server.ts';
import { checkWebhookUrl, guardedLookup, isPrivateAddress } from '../../api/events/webhooks/url-policy.ts';
import { SubscriptionStore } from '../../api/events/webhooks/store.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { expectProblem, get, newKey, serve } from '../api/helpers.ts';
import { quorumAsync, quorumProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { run, T1, T2, writeRound1, writeRound2 } from './warehouse.ts';

interface Hit {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}
type Behave = (n: number) => { status: number; headers?: Record<string, string> } | 'hang';

/** A loopback HTTP receiver answering by `behave(n)` (n = 1 for its first request). */
async function receiver(behave: Behave) {
  const hits: Hit[] = [];
  const hung: import('node:http').ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      hits.push({ headers: req.headers, body, at: Date.now() });
      const b = behave(hits.length);
      if (b === 'hang') {
        hung.push(res);
        return;
      }
      res.writeHead(b.status, b.headers).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url, hits,
    close: () => new Promise<void>((r) => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

async function until(cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function maxSeq(dir: string): Promise<number> {
  return withConnection(async (conn) => {
    await createRawViews(conn, dir);
    return Number((await conn.runAndReadAll('SELECT coalesce(max(seq), 0)::INTEGER AS n FROM raw_events')).getRowObjectsJS()[0]!.n);
  });
}

/** Synthetic events, written like the pipeline writes them (one atomic part, seq continuing). */
async function appendEvents(dir: string, n: number): Promise<void> {
  const start = await maxSeq(dir);
  const now = new Date();
  const rows = Array.from({ length: n }, (_, i) => ({
    event_id: `evt_wh_${start + i + 1}`, seq: start + i + 1, run_id: 'r20250301T000000Z-synth002', type: 'consensus.updated',
    subject: `manifold:w${start + i}`, question_id: `manifold:w${start + i}`, category: 'tech', as_of: now, created_at: now,
    snapshot: 'r20250301T000000Z-synth002', previous_snapshot: null, data: JSON.stringify({ n: start + i + 1 }),
  }));
  await withConnection((conn) => appendRaw(conn, dir, 'events', rows, { runId: 'r20250301T000000Z-synth002', runDate: '2025-03-01' }));
}

function verify(secret: string, hit: Hit): unknown {
  return new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>);
}

const tmp = tempDir('quorum-webhooks-');
const root = tmp.dir;
let server: ServerHandle;
let key = '';
const receivers: { close: () => Promise<void> }[] = [];

const api = (p: string, init: RequestInit = {}, k = key) =>
  get(server, p, { ...init, headers: { 'X-API-Key': k, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
const create = (body: object, k = key) => api('/api/webhooks/', { method: 'POST', body: JSON.stringify(body) }, k);

beforeAll(async () => {
  await writeRound1(root);
  expect((await run(root, T1)).status).toBe('completed');
  server = await serve(root, {
    events: { pollMs: 25, webhooks: { allowPrivate: true, backoffMs: 30, maxBackoffMs: 200, timeoutMs: 400, retryWindowMs: 2500 } },
  });
  key = newKey(root, 'enterprise').key;
}, 120_000);
afterAll(async () => {
  await server?.close();
  for (const r of receivers) await r.close();
  tmp.cleanup();
});

describe('webhook URL policy', () => {
  it('https only; private, loopback and link-local addresses refused unless allowed', async () => {
    for (const bad of ['http://93.184.216.34/', 'https://127.0.0.1/', 'https://10.1.2.3/', 'https://192.168.1.1/', 'https://[::1]/',
      'https://169.254.169.254/', 'https://[fe80::1]/', 'https://[::ffff:127.0.0.1]/', 'https://user:pw@93.184.216.34/', 'not a url']) {
      await expect(checkWebhookUrl(bad, false), bad).rejects.toThrow();
    }
    expect((await checkWebhookUrl('https://93.184.216.34/hook', false)).href).toBe('https://93.184.216.34/hook');
    expect((await checkWebhookUrl('http://127.0.0.1:9/x', true)).protocol).toBe('http:');
    expect(isPrivateAddress('172.20.0.1')).toBe(true);
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    // At delivery time the address actually connected to is checked again.
    const err = await new Promise<Error | null>((r) => guardedLookup(false)('localhost', {}, (e) => r(e)));
    expect(err?.message).toMatch(/private/);
  });
});

describe('webhook subscriptions', () => {
  it('create shows the whsec_ secret once; a key sees only its own; delete; bad input is a 400', async () => {
    expectProblem(await get(server, '/api/webhooks/'), 403, 'plan_required');
    const c = await create({ url: 'https://93.184.216.34/a', types: ['edge.opened'], description: 'mine' });
    expect(c.res.status).toBe(201);
    expect(c.body.secret).toMatch(/^whsec_/);
    expect(c.body).toMatchObject({ url: 'https://93.184.216.34/a', types: ['edge.opened'], status: 'enabled' });
    const other = newKey(root, 'enterprise').key;
    expect((await api('/api/webhooks/', {}, other)).body.count).toBe(0);
    expectProblem(await api(`/api/webhooks/${c.body.id}/`, {}, other), 404, 'not_found');
    const mine = await api(`/api/webhooks/${c.body.id}/`);
    expect(mine.body.id).toBe(c.body.id);
    expect(mine.body.secret).toBeUndefined();
    expectProblem(await create({ url: 'ftp://x/' }), 400, 'invalid_body');
    expectProblem(await create({ url: 'https://93.184.216.34/', types: ['nope'] }), 400, 'invalid_body');
    expect((await api(`/api/webhooks/${c.body.id}/`, { method: 'DELETE' })).res.status).toBe(204);
    expectProblem(await api(`/api/webhooks/${c.body.id}/`), 404, 'not_found');
  });
});

describe('quorum webhooks (the CLI)', () => {
  it('create (secret once), list, rotate-secret, delete on the same store the API serves; a refused URL exits 1', async () => {
    const { key: k, id } = newKey(root, 'enterprise');
    const env = { QUORUM_DATA_DIR: root, QUORUM_WEBHOOKS_ALLOW_PRIVATE: 'false' };
    const refused = await quorumAsync(['webhooks', 'create', '--key', id, '--url', 'https://127.0.0.1/x'], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/private/);
    const made = await quorumAsync(['webhooks', 'create', '--key', id, '--url', 'https://93.184.216.34/cli', '--types', 'run.completed'], env);
    expect(made.status, made.stderr).toBe(0);
    const sub = JSON.parse(made.stdout);
    expect(sub.secret).toMatch(/^whsec_/);
    const seen = await api('/api/webhooks/', {}, k);
    expect(seen.body.webhooks.map((w: any) => w.id)).toEqual([sub.id]);
    const listed = await quorumAsync(['webhooks', 'list', '--key', id, '--json'], env);
    expect(listed.stdout).not.toContain('whsec_');
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ id: sub.id, types: ['run.completed'] });
    const rot = await quorumAsync(['webhooks', 'rotate-secret', sub.id], env);
    expect(JSON.parse(rot.stdout).secret).not.toBe(sub.secret);
    expect((await quorumAsync(['webhooks', 'delete', sub.id], env)).status).toBe(0);
    expect((await api('/api/webhooks/', {}, k)).body.count).toBe(0);
  }, 60_000);
});

describe('webhook delivery', () => {
  it('delivers every event of a real run, in order, signed (verified by standardwebhooks), with a rotated secret too; replay re-sends with the same ids', async () => {
    const ok = await receiver(() => ({ status: 200 }));
    receivers.push(ok);
    const c = await create({ url: ok.url });
    const secret = c.body.secret as string;
    await writeRound2(root);
    expect((await run(root, T2)).status).toBe('completed');
    await until(() => ok.hits.length === 9);
    const bodies = ok.hits.map((h) => verify(secret, h) as { type: string; timestamp: string; data: any });
    expect(bodies.map((b) => b.type)).toEqual([
      'consensus.updated', 'consensus.updated', 'consensus.updated', 'edge.opened', 'edge.closed',
      'question.resolved', 'question.annulled', 'score.posted', 'run.completed',
    ]);
    expect(bodies[0]!.data.question_id).toBe('manifold:q1');
    expect(typeof bodies[0]!.timestamp).toBe('string');
    expect(() => verify(`whsec_${Buffer.from('wrong key').toString('base64')}`, ok.hits[0]!)).toThrow();

    const rot = await api(`/api/webhooks/${c.body.id}/rotate-secret`, { method: 'POST' });
    expect(rot.res.status).toBe(200);
    expect(rot.body.secret).not.toBe(secret);
    await appendEvents(root, 1);
    await until(() => ok.hits.length === 10);
    const last = ok.hits[9]!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rot.body.secret, last)).toMatchObject({ type: 'consensus.updated' });
    expect(verify(secret, last)).toMatchObject({ type: 'consensus.updated' });

    const ids = ok.hits.map((h) => h.headers['webhook-id']);
    const re = await api(`/api/webhooks/${c.body.id}/replay?since=0`, { method: 'POST' });
    expect(re.res.status).toBe(202);
    expect(re.body.queued).toBe(10);
    await until(() => ok.hits.length === 20);
    expect(ok.hits.slice(10).map((h) => h.headers['webhook-id'])).toEqual(ids);
    const del = await api(`/api/webhooks/${c.body.id}/deliveries`);
    expect(del.body.count).toBe(10);
    expect(del.body.deliveries[0]).toMatchObject({ status: 'delivered' });
    expect(del.body.deliveries[0].attempts.length).toBe(2);
    await api(`/api/webhooks/${c.body.id}/`, { method: 'DELETE' });
  }, 120_000);

  it('500 is retried with backoff; 429 waits for Retry-After; 410 disables; a receiver that never answers is retried for the window, then disabled', async () => {
    const flaky = await receiver((n) => ({ status: n <= 2 ? 500 : 200 }));
    const slow = await receiver((n) => (n === 1 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 200 }));
    const gone = await receiver(() => ({ status: 410 }));
    const never = await receiver(() => 'hang');
    receivers.push(flaky, slow, gone, never);
    const subs = await Promise.all([flaky, slow, gone, never].map(async (r) => (await create({ url: r.url, types: ['consensus.updated'] })).body));
    await appendEvents(root, 1);
    await until(() => flaky.hits.length === 3 && slow.hits.length === 2 && gone.hits.length === 1);
    const secret = (i: number) => subs[i].secret as string;
    for (const h of flaky.hits) verify(secret(0), h);
    expect(new Set(flaky.hits.map((h) => h.headers['webhook-id'])).size).toBe(1); // the same message, retried
    expect(slow.hits[1]!.at - slow.hits[0]!.at).toBeGreaterThanOrEqual(950);
    verify(secret(1), slow.hits[1]!);
    await until(async_(async () => (await api(`/api/webhooks/${subs[2].id}/`)).body.status === 'disabled'));
    expect((await api(`/api/webhooks/${subs[2].id}/`)).body.disabled_reason).toMatch(/410/);
    // never: timeouts (400 ms) retried until the 2.5 s window is over
    await until(async_(async () => (await api(`/api/webhooks/${subs[3].id}/`)).body.status === 'disabled'), 15_000);
    const s3 = (await api(`/api/webhooks/${subs[3].id}/`)).body;
    expect(s3.disabled_reason).toMatch(/retry window/);
    expect(never.hits.length).toBeGreaterThanOrEqual(2);
    const attempts = (await api(`/api/webhooks/${subs[3].id}/deliveries`)).body.deliveries[0].attempts;
    expect(attempts.every((a: any) => a.status === null && typeof a.error === 'string')).toBe(true);
    const f = (await api(`/api/webhooks/${subs[0].id}/deliveries`)).body.deliveries[0];
    expect(f.attempts.map((a: any) => a.status)).toEqual([500, 500, 200]);
  }, 60_000);
});

/** `until` with an async condition polled every 50 ms. */
function async_(cond: () => Promise<boolean>): () => boolean {
  let value = false;
  let busy = false;
  return () => {
    if (!busy) {
      busy = true;
      void cond().then((v) => {
        value = v;
        busy = false;
      });
    }
    return value;
  };
}

describe('a server killed mid-delivery (SIGKILL)', () => {
  it('re-sends on restart: every event arrives at least once, duplicates carry the same webhook-id', async () => {
    const side = tempDir('quorum-webhooks-kill-');
    let hang = true;
    const r = await receiver(() => (hang ? 'hang' : { status: 200 }));
    receivers.push(r);
    const env = {
      QUORUM_DATA_DIR: side.dir, PORT: '0', HOST: '127.0.0.1', QUORUM_VENUES: 'none', LOG_LEVEL: 'silent',
      QUORUM_EVENTS_POLL_MS: '25', QUORUM_WEBHOOKS_ALLOW_PRIVATE: 'true', QUORUM_WEBHOOKS_TIMEOUT_MS: '60000', QUORUM_WEBHOOKS_BACKOFF_MS: '20',
    };
    const start = async () => {
      const child = quorumProcess(['serve'], env);
      await until(() => existsSync(join(side.dir, 'server.json')), 60_000);
      return child;
    };
    try {
      await appendEvents(side.dir, 1); // an event before the subscription: not for it
      const sub = new SubscriptionStore(side.dir).create({ keyId: 'k_test', url: r.url, types: null, description: null });
      const first = await start();
      await new Promise((res) => setTimeout(res, 300));
      await appendEvents(side.dir, 4); // seq 2..5
      await until(() => r.hits.length >= 1, 30_000); // the first delivery is in flight, never answered
      first.kill('SIGKILL');
      await new Promise((res) => first.once('exit', res));
      expect(existsSync(join(side.dir, 'webhooks', 'queue.jsonl'))).toBe(true);
      const inFlightId = r.hits[0]!.headers['webhook-id'];
      hang = false;
      const second = await start();
      try {
        await until(() => new Set(r.hits.map((h) => h.headers['webhook-id'])).size === 4 && r.hits.length >= 5, 30_000);
      } finally {
        second.kill('SIGTERM');
        await new Promise((res) => second.once('exit', res));
      }
      const secret = sub.secrets[0]!.secret;
      const data = r.hits.map((h) => (verify(secret, h) as { data: { n: number } }).data.n);
      expect([...new Set(data)].sort()).toEqual([2, 3, 4, 5]);
      const again = r.hits.filter((h) => h.headers['webhook-id'] === inFlightId);
      expect(again.length).toBeGreaterThanOrEqual(2); // sent before the kill and after the restart, same id
      expect(new Set(again.map((h) => (verify(secret, h) as { data: { n: number } }).data.n)).size).toBe(1);
      expect(readFileSync(join(side.dir, 'webhooks', 'queue.jsonl'), 'utf8')).toMatch(/"op":"(done|fin)"/); // the outcomes were journaled
    } finally {
      side.cleanup();
    }
  }, 120_000);
});
