/**
 * GET /api/stream/ (issue 15 point 2) against a real server on 127.0.0.1:0 over a real warehouse:
 * the independent `eventsource` client receives the replay and the live events of a real
 * pipeline run, reconnects with Last-Event-ID without a gap or a repeat; filters; heartbeats;
 * a client that stops reading is cut off with a final event saying how to resume; 200 clients at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { EventSource } from 'eventsource';
import type { ServerHandle } from '../../api/server.ts';
import type { StreamHub } from '../../api/events/stream-hub.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { streamEvent, streamGap, streamOverflow } from '../../api/events/payloads.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { expectProblem, get, newKey, serve } from '../api/helpers.ts';
import { revokeKey } from '../../api/auth/keys.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts'; // state written durably on every change: in memory (see there)
import { run, T1, T2, writeRound1, writeRound2 } from './warehouse.ts';

const tmp = memTempDir('quorum-stream-');
const root = tmp.dir;
let server: ServerHandle;
let key = '';

const hub = () => server.app.app.locals.eventStream as StreamHub;

async function maxSeq(dir = root): Promise<number> {
  return withConnection(async (conn) => {
    await createRawViews(conn, dir);
    const r = await conn.runAndReadAll('SELECT coalesce(max(seq), 0)::INTEGER AS n FROM raw_events');
    return Number(r.getRowObjectsJS()[0]!.n);
  });
}

interface Received {
  seq: number;
  type: string;
  data: any;
}

/** An EventSource (the npm package) with the API key, collecting every event. */
function open(query: string, onEvent?: (e: Received) => void) {
  const got: Received[] = [];
  const es = new EventSource(`${server.url}/api/stream/${query}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'X-API-Key': key } }),
  });
  const types = ['consensus.updated', 'edge.opened', 'edge.closed', 'question.resolved', 'question.annulled', 'score.posted', 'run.completed'];
  for (const t of types) {
    es.addEventListener(t, (m) => {
      const e = { seq: Number(m.lastEventId), type: m.type, data: JSON.parse(m.data) };
      got.push(e);
      onEvent?.(e);
    });
  }
  return { es, got };
}

async function until(cond: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Synthetic events written the way the pipeline writes them (one atomic part), continuing seq (in `dir`, default the file's warehouse). */
async function appendEvents(n: number, pad = 0, dir = root): Promise<void> {
  const start = await maxSeq(dir);
  const now = new Date();
  const rows = Array.from({ length: n }, (_, i) => ({
    event_id: `evt_synthetic_${start + i + 1}`, seq: start + i + 1, run_id: 'r20250201T000000Z-synth001', type: 'consensus.updated',
    subject: `manifold:s${i}`, question_id: `manifold:s${i}`, category: 'tech', as_of: now, created_at: now,
    snapshot: 'r20250201T000000Z-synth001', previous_snapshot: null, data: JSON.stringify({ i, pad: 'x'.repeat(pad) }),
  }));
  await withConnection((conn) => appendRaw(conn, dir, 'events', rows, { runId: 'r20250201T000000Z-synth001', runDate: '2025-02-01' }));
}

beforeAll(async () => {
  await writeRound1(root);
  expect((await run(root, T1)).status).toBe('completed'); // events 1 and 2
  server = await serve(root, { events: { pollMs: 25, heartbeatMs: 100, maxBufferBytes: 64 * 1024 } });
  key = newKey(root, 'enterprise').key;
}, 120_000);
afterAll(async () => {
  await server?.close();
  tmp.cleanup();
});

describe('GET /api/stream/', () => {
  it('is for enterprise keys; parameters are checked', async () => {
    expectProblem(await get(server, '/api/stream/'), 403, 'plan_required');
    const pro = newKey(root, 'pro').key;
    expectProblem(await get(server, '/api/stream/', { headers: { 'X-API-Key': pro } }), 403, 'plan_required');
    const h = { 'X-API-Key': key };
    expectProblem(await get(server, '/api/stream/?types=consensus.updated,nope', { headers: h }), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/stream/?since=-1', { headers: h }), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/stream/?category=weather', { headers: h }), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/stream/', { headers: { ...h, 'Last-Event-ID': 'abc' } }), 400, 'invalid_parameter');
    // a malformed since is refused also when Last-Event-ID (which wins) is sent beside it: it was
    // ignored then, so the same URL answered 400 or a stream depending on a header
    const both = await get(server, '/api/stream/?since=abc', { headers: { ...h, 'Last-Event-ID': '0' } });
    expectProblem(both, 400, 'invalid_parameter');
    expect(both.body.parameter).toBe('since');
  });

  it('replays from since, then delivers a real run live; a reconnect with Last-Event-ID skips nothing and repeats nothing', async () => {
    const all = open('?since=0');
    const filtered = open('?types=consensus.updated,edge.opened&category=finance');
    await until(() => all.got.length === 2);
    expect(all.got.map((e) => [e.seq, e.type])).toEqual([[1, 'edge.opened'], [2, 'run.completed']]);
    expect(all.got[0]!.data).toMatchObject({ seq: 1, type: 'edge.opened', data: { question_id: 'manifold:q5' } });
    expect(all.got[0]!.data.id).toMatch(/^evt_/);

    await writeRound2(root);
    const s2 = await run(root, T2);
    expect(s2.status).toBe('completed');
    const total = await maxSeq();
    expect(total).toBe(11);
    await until(() => all.got.length === total);
    expect(all.got.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Every frame of a real run is what the OpenAPI document's StreamEvent says, strictly.
    for (const e of all.got) {
      const parsed = streamEvent.safeParse(e.data);
      expect(parsed.success, `${e.type} ${e.seq}: ${parsed.error?.message}`).toBe(true);
    }
    await until(() => filtered.got.length === 2);
    expect(filtered.got.map((e) => `${e.type} ${e.data.data.question_id}`)).toEqual([
      'consensus.updated manifold:q2',
      'edge.opened manifold:q2',
    ]);

    // The server drops every stream; EventSource reconnects by itself with Last-Event-ID.
    let reconnected = false;
    all.es.addEventListener('open', () => (reconnected = true));
    hub().closeAll();
    await appendEvents(3);
    await until(() => all.got.length === total + 3 && reconnected);
    await new Promise((r) => setTimeout(r, 200));
    expect(all.got.map((e) => e.seq)).toEqual(Array.from({ length: total + 3 }, (_, i) => i + 1));
    all.es.close();
    filtered.es.close();
  }, 120_000);

  it('Last-Event-ID wins over since, and a question_id filter keeps one question', async () => {
    // the venue in any case, as on the paths (QA: MANIFOLD:q5 matched nothing)
    const res = await fetch(`${server.url}/api/stream/?since=0&question_id=MANIFOLD:q5`, {
      headers: { 'X-API-Key': key, 'Last-Event-ID': '2' },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: edge.closed')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual([5, 7]); // q5: consensus.updated (5), edge.closed (7); not its edge.opened (1)
    // no question id at all: a 400, not a stream that never sends anything
    const bad = await fetch(`${server.url}/api/stream/?question_id=x%20y`, { headers: { 'X-API-Key': key } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { parameter: string }).parameter).toBe('question_id');
  });

  it('a key revoked while its stream is open: the stream ends before the next event (QA: it kept receiving every event)', async () => {
    const { key: k, id } = newKey(root, 'enterprise');
    /** A raw stream (no EventSource: it would reconnect): its text, and whether it has ended. */
    const ac = new AbortController();
    const raw = async () => {
      const res = await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': k }, signal: ac.signal });
      expect(res.status).toBe(200);
      const s = { text: '', ended: false };
      void (async () => {
        const dec = new TextDecoder();
        for await (const chunk of res.body!) s.text += dec.decode(chunk as Uint8Array, { stream: true });
        s.ended = true;
      })().catch(() => { s.ended = true; });
      return s;
    };
    try {
      const streams = [await raw(), await raw()];
      await appendEvents(1);
      const before = await maxSeq();
      await until(() => streams.every((s) => s.text.includes(`id: ${before}\n`)));
      revokeKey(root, id);
      await appendEvents(1);
      await until(() => streams.every((s) => s.ended), 5_000);
      for (const s of streams) {
        expect(s.text).not.toContain(`id: ${before + 1}\n`);
        expect(s.text).toContain(': the API key of this stream was revoked');
      }
    } finally {
      ac.abort();
    }
    const before = await maxSeq();
    // and its reconnect is refused like any request of the revoked key
    expectProblem(await get(server, '/api/stream/', { headers: { 'X-API-Key': k, 'Last-Event-ID': String(before - 1) } }), 401, 'unauthorized');
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    const res = await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': key } });
    const reader = res.body!.getReader();
    let text = '';
    const started = Date.now();
    while (!text.includes(': heartbeat')) text += new TextDecoder().decode((await reader.read()).value);
    expect(Date.now() - started).toBeLessThan(2000);
    await reader.cancel();
  });

  it('a client that stops reading is cut off with a final event naming where to resume; the server keeps no buffer for it', async () => {
    // The earlier tests' streams gone first: one the server had not yet seen cancelled was counted
    // in `before`, and its going could pass for this client's cut.
    await until(() => hub().clients === 0);
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET /api/stream/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`);
    await until(() => hub().clients === 1);
    socket.pause(); // reads nothing from now on
    const before = hub().clients;
    await appendEvents(6000, 2000); // ~12 MB: more than the socket buffers hold
    await until(() => hub().clients === before - 1, 30_000);
    // Now read what the server had sent: the events up to some id, then the overflow notice.
    const chunks: Buffer[] = [];
    let closed = false;
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('end', () => (closed = true));
    socket.resume();
    // Until the response's last chunk: the connection itself stays open (keep-alive) until the
    // server's keep-alive timeout, 5 s later, which this test used to wait for.
    await until(() => closed || Buffer.concat(chunks).toString('latin1').endsWith('\r\n0\r\n\r\n'));
    socket.destroy();
    const text = Buffer.concat(chunks).toString('utf8');
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    const overflow = /event: stream\.overflow\ndata: (.*)\n/.exec(text);
    expect(overflow).not.toBeNull();
    const notice = JSON.parse(overflow![1]!);
    expect(streamOverflow.safeParse(notice).success, overflow![1]).toBe(true);
    expect(notice.reason).toBe('slow_client');
    expect(Number(notice.last_event_id)).toBe(ids[ids.length - 1]);
    expect(notice.detail).toMatch(/Last-Event-ID/);
    expect(ids.length).toBeLessThan(6000);
    // The feed reads the 6000 events 500 at a time: the next tests' live streams start once it has
    // handed out the last (before, they got the rest of them unread and were cut off as slow).
    const newest = await maxSeq();
    await until(() => hub().lastSeq === newest, 30_000);
  }, 60_000);

  it('serves 200 clients at once (20 keys, 10 streams each: the per-key cap), each getting the new event', async () => {
    const keys = Array.from({ length: 20 }, () => newKey(root, 'enterprise').key);
    const clients = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const res = await fetch(`${server.url}/api/stream/?types=consensus.updated`, { headers: { 'X-API-Key': keys[i % 20]! } });
        expect(res.status).toBe(200);
        return res.body!.getReader();
      }),
    );
    await until(() => hub().clients >= 200);
    const target = (await maxSeq()) + 1;
    await appendEvents(1);
    const seen = await Promise.all(
      clients.map(async (reader) => {
        let text = '';
        while (!text.includes(`id: ${target}\n`)) text += new TextDecoder().decode((await reader.read()).value);
        await reader.cancel();
        return true;
      }),
    );
    expect(seen.filter(Boolean)).toHaveLength(200);
    await until(() => hub().clients === 0);
  }, 60_000);

  it('one key may hold QUORUM_STREAM_MAX_PER_KEY streams (10): one more is a 429 saying so, other keys still get in (QA: one key could take every slot)', async () => {
    const greedy = newKey(root, 'enterprise').key;
    const open10 = await Promise.all(
      Array.from({ length: 10 }, async () => (await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': greedy } })).body!.getReader()),
    );
    await until(() => hub().clients >= 10);
    const more = await get(server, '/api/stream/', { headers: { 'X-API-Key': greedy } });
    expectProblem(more, 429, 'rate_limited');
    expect(more.body).toMatchObject({ policy: 'streams_per_key', limit: 10 });
    expect(more.body.detail).toMatch(/QUORUM_STREAM_MAX_PER_KEY/);
    const other = await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': key } });
    expect(other.status).toBe(200);
    await other.body!.cancel();
    await open10[0]!.cancel(); // one ended: the key may open another
    await until(() => hub().clients <= 9);
    const again = await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': greedy } });
    expect(again.status).toBe(200);
    await again.body!.cancel();
    for (const r of open10.slice(1)) await r.cancel();
    await until(() => hub().clients === 0);
  });

  it('a resume point beyond the newest event is a 400 naming the newest; one equal to it streams live from there', async () => {
    const newest = await maxSeq();
    expect(hub().lastSeq).toBe(newest);
    const h = { 'X-API-Key': key };
    const header = await get(server, '/api/stream/?since=0', { headers: { ...h, 'Last-Event-ID': String(newest + 1) } });
    expectProblem(header, 400, 'invalid_parameter');
    expect(header.body.parameter).toBe('Last-Event-ID');
    expect(header.body.detail).toContain(`Last-Event-ID: ${newest}`);
    expect(header.body.detail).toMatch(/without a resume point/);
    const since = await get(server, '/api/stream/?since=999999', { headers: h });
    expectProblem(since, 400, 'invalid_parameter');
    expect(since.body.parameter).toBe('since');
    expect(since.body.detail).toContain(`?since=${newest}`);
    expect(since.body.detail).toContain('999999');
    expect((await fetch(`${server.url}/api/stream/?since=999999`, { method: 'HEAD', headers: h })).status).toBe(400);

    // Equal to the newest: nothing replayed, the next event arrives live.
    const res = await fetch(`${server.url}/api/stream/`, { headers: { ...h, 'Last-Event-ID': String(newest) } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await until(() => hub().clients >= 1);
    await appendEvents(1);
    let text = '';
    while (!text.includes(`id: ${newest + 1}\n`)) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([newest + 1]);
  });

  it('a resume point written by another process but not yet polled is accepted (the feed catches up first)', async () => {
    const lazy = await serve(root, { events: { pollMs: 0, heartbeatMs: 100 } }); // polls only on demand
    try {
      const before = await maxSeq();
      await appendEvents(2);
      const lazyHub = lazy.app.app.locals.eventStream as StreamHub;
      expect(lazyHub.lastSeq).toBe(before); // not seen yet
      const res = await fetch(`${lazy.url}/api/stream/`, { headers: { 'X-API-Key': key, 'Last-Event-ID': String(before + 1) } });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(`id: ${before + 2}\n`)) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([before + 2]);
      expectProblem(await get(lazy, '/api/stream/?since=' + String(before + 3), { headers: { 'X-API-Key': key } }), 400, 'invalid_parameter');
    } finally {
      await lazy.close();
    }
  });

  it('with no events at all the newest is 0: since=0 streams, any later resume point is a 400', async () => {
    const empty = memTempDir('quorum-stream-empty-');
    const s = await serve(empty.dir, { events: { pollMs: 25, heartbeatMs: 100 } });
    try {
      const k = { 'X-API-Key': newKey(empty.dir, 'enterprise').key };
      const bad = await get(s, '/api/stream/?since=5', { headers: k });
      expectProblem(bad, 400, 'invalid_parameter');
      expect(bad.body.detail).toContain('?since=0');
      expect(bad.body.allowed).toEqual({ min: 0, max: 0 });
      expectProblem(await get(s, '/api/stream/', { headers: { ...k, 'Last-Event-ID': '1' } }), 400, 'invalid_parameter');
      const ok = await fetch(`${s.url}/api/stream/?since=0`, { headers: k });
      expect(ok.status).toBe(200);
      await ok.body!.cancel();
    } finally {
      await s.close();
      empty.cleanup();
    }
  });

  // The two retention tests run together (it.concurrent), their waits for the retention to pass
  // overlapping: the first on the file's warehouse, the second on a warehouse of its own.
  it.concurrent('a resume point older than the retention period gets a stream.gap event naming what cannot be replayed', async () => {
    const short = await serve(root, { events: { pollMs: 25, heartbeatMs: 100, retentionMs: 1500 } });
    try {
      await new Promise((r) => setTimeout(r, 1600)); // everything written so far is now past retention
      const target = (await maxSeq()) + 1;
      await appendEvents(1);
      const res = await fetch(`${short.url}/api/stream/?since=0`, { headers: { 'X-API-Key': key } });
      const reader = res.body!.getReader();
      let text = '';
      while (!text.includes(`id: ${target}\n`)) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      const gap = JSON.parse(/event: stream\.gap\ndata: (.*)\n/.exec(text)![1]!);
      expect(streamGap.safeParse(gap).success, JSON.stringify(gap)).toBe(true);
      expect(gap).toMatchObject({ reason: 'retention', missing_from: 1, missing_to: target - 1 });
      expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([target]);
    } finally {
      await short.close();
    }
  });

  it.concurrent('a resume point whose later events are all past retention gets a stream.gap too, before the next live event (QA: it resumed silently past them)', async () => {
    const side = memTempDir('quorum-stream-retained-none-');
    await appendEvents(2, 0, side.dir); // a run's events, then none for longer than the retention
    const short = await serve(side.dir, { events: { pollMs: 25, heartbeatMs: 100, retentionMs: 1500 } });
    try {
      const sideKey = newKey(side.dir, 'enterprise').key;
      await new Promise((r) => setTimeout(r, 1600)); // every event is now past retention: none is retained
      const newest = await maxSeq(side.dir);
      expect(newest).toBe(2);
      const res = await fetch(`${short.url}/api/stream/?since=0`, { headers: { 'X-API-Key': sideKey } });
      const reader = res.body!.getReader();
      let text = '';
      const readUntil = async (s: string) => {
        const end = Date.now() + 10_000;
        while (!text.includes(s)) {
          if (Date.now() > end) throw new Error(`no ${JSON.stringify(s)} in ${JSON.stringify(text)}`);
          text += new TextDecoder().decode((await reader.read()).value);
        }
      };
      await readUntil(': heartbeat'); // the replay is over: the stream is live
      await appendEvents(1, 0, side.dir); // the next run's event
      await readUntil(`id: ${newest + 1}\n`);
      await reader.cancel();
      const gap = /event: stream\.gap\ndata: (.*)\n/.exec(text);
      expect(gap, text).not.toBeNull();
      expect(JSON.parse(gap![1]!)).toMatchObject({ reason: 'retention', missing_from: 1, missing_to: newest });
      expect(text.indexOf('event: stream.gap')).toBeLessThan(text.indexOf(`id: ${newest + 1}\n`));
      expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([newest + 1]);
    } finally {
      await short.close();
      side.cleanup();
    }
  });

  it('with a small QUORUM_STREAM_MAX_BUFFER_BYTES a client that keeps up gets the replay whole, and an event larger than the cap, replayed and live (QA: a resume was cut off as slow after one event, and an event over the cap overflowed every stream at every resume)', async () => {
    const small = await serve(root, { events: { pollMs: 25, heartbeatMs: 60_000, maxBufferBytes: 1024 } });
    const opts = { headers: { 'X-API-Key': key } };
    try {
      const before = await maxSeq();
      await appendEvents(10, 300); // ten of ~0.5 kB: together past the cap
      await appendEvents(1, 1500); // one of ~1.7 kB: a long evidence excerpt, say
      await appendEvents(1);
      // live: a stream opened before the two events
      const live = await fetch(`${small.url}/api/stream/`, opts);
      // replayed: a resume from before them (what the live stream's reconnect would send)
      const replay = await fetch(`${small.url}/api/stream/?since=${before}`, opts);
      const readAll = async (res: Response, until: string) => {
        const reader = res.body!.getReader();
        let text = '';
        const end = Date.now() + 10_000;
        while (!text.includes(until) && !text.includes('stream.overflow') && Date.now() < end) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        await reader.cancel();
        return text;
      };
      const replayed = await readAll(replay, `id: ${before + 12}\n`);
      expect(replayed).not.toContain('stream.overflow');
      expect([...replayed.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual(Array.from({ length: 12 }, (_, i) => before + 1 + i));
      await appendEvents(1, 1500);
      const lived = await readAll(live, `id: ${before + 13}\n`);
      expect(lived).not.toContain('stream.overflow');
      expect([...lived.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toContain(before + 13);
    } finally {
      await small.close();
    }
  });
});
