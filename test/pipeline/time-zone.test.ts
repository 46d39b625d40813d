/**
 * The host's time zone and locale change nothing Quorum publishes (README: timestamps are UTC; the
 * schedule, quotas and day windows too). An operator runs the CLI and the API on a machine in
 * Chatham (+13:45, +12:45 in winter: its DST ends at 14:00 UTC on 2026-04-04) with a Turkish
 * locale, and another in UTC: the same imports and runs must publish the same snapshot, row for
 * row, and the API must answer the same, filters by time included.
 *
 * The ForecastBench fixture is imported once and the directory copied; everything after it (the
 * claims import, whose times come without an offset, with one, or as a bare date; two dated runs,
 * one at the DST change; `quorum serve`) runs in each zone. What may differ: run ids' and raw
 * parts' random suffixes, and the wall-clock times of this test's own commands (a snapshot's
 * `created_at`, evidence's `retrieved_at`), every other time being the data's, before 2026-05.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quorumAsync, quorumProcess, REPO, serveOutcome } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { createKey } from '../../api/auth/keys.ts';
import { openUtcInstance, sqlFilePath } from '../../pipeline/warehouse/duckdb.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';

const ZONES = {
  utc: { TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' },
  chatham: { TZ: 'Pacific/Chatham', LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' },
} as const;
type Zone = keyof typeof ZONES;

/** An operator's claims: a bare date, times without an offset (UTC), with one, and at DST changes. */
const CLAIMS =
  'claim_id,source,made_at,kind,subject,probability,outcome,resolved_at\n' +
  'tz-1,Tz Pundit,2024-03-01,probability,a,0.7,1,2024-06-01\n' +
  'tz-2,Tz Pundit,2024-03-01 23:30,probability,b,0.6,0,2024-06-01T10:00\n' +
  'tz-3,Tz Pundit,2024-03-01T10:00+05:45,probability,c,0.8,1,2024-06-01T10:00:30.5+0545\n' +
  'tz-4,Tz Pundit,2024-04-06T14:30Z,probability,d,0.3,0,2024-09-29t14:30z\n' +
  'tz-5,Tz Pundit,2024-11-03T01:30,probability,e,0.55,1,2025-03-09T02:30\n' +
  'tz-6,Tz Pundit,2024-11-03T01:30-04,probability,f,0.45,0,2025-03-09T02:30-05\n';

/** When this test's commands started: a time between then and now is a wall-clock one, not the data's. */
const started = Date.now();

/**
 * `text` with what differs between two hosts' runs whatever their zones made the same: run ids'
 * (so snapshot ids') random suffix, raw part files' names (time and random hex), the times of
 * this test's own commands, in ISO (`…T…Z`) or DuckDB's (`… …`) notation, and a double's last
 * bits, which follow the order DuckDB's threads summed it in (sql/derive/52_leaderboard.sql,
 * test/scoring/determinism.test.ts: review, a leaderboard's brier_adjusted 0.0752130625 in one
 * zone and 0.07521306249999998 in the other, the file failing run alone); a time read in the
 * wrong zone is hours or a day off, never a 1e-12.
 */
function normalized(text: string): string {
  return text
    .replace(/-?\d+\.\d{13,}(?:e[+-]?\d+)?/gi, (x) => String(Number(Number(x).toPrecision(12))))
    .replace(/(r\d{8}T\d{6}Z)-[a-z0-9]{12}/g, '$1')
    .replace(/part-\d+-[0-9a-f]{8}\.parquet/g, 'part.parquet')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, (t) => {
      const at = Date.parse(`${t.replace(' ', 'T').replace(/Z$/, '')}Z`);
      return at >= started && at <= Date.now() ? '<wall clock>' : t;
    });
}

/** API answers compared between the zones (with time filters given as dates and with offsets). */
const PATHS = [
  '/api/predictions/resolved?limit=50',
  '/api/predictions/accuracy',
  '/api/predictions/metaculus:17112',
  '/api/leaderboard/',
  '/api/leaderboard/?since=2026-01-01',
  '/api/leaderboard/?since=2026-01-01T00:00:00%2B13:45',
  '/api/claims/?source=tz-pundit',
  '/api/claims/?source=tz-pundit&made_since=2024-03-01T23:30:00',
  '/api/claims/?source=tz-pundit&made_since=2024-03-02T05:45:00%2B05:45',
  '/api/track-records/sources/tz-pundit/',
  '/api/track-records/sources/tz-pundit/trends/',
  '/api/export/claims/?output=csv&created_since=2024-03-01T12:00:00-12:00',
  '/api/export/resolved/?output=csv',
  '/api/export/scores/?output=json',
  '/api/export/forecasts/?output=jsonl&created_since=2026-04-04',
];

/**
 * The export whose rows come in no defined order: the scores export is the snapshot's
 * scored_forecasts in its file's order, which the derive leaves as DuckDB's threads grouped it
 * (README "Exports"; run alone, one row of four runs placed otherwise). The claims export is
 * ordered (sql/README.md).
 */
const UNORDERED = '/api/export/scores/';

/** A body's first line, then its other lines sorted. */
function linesSorted(body: string): string {
  // (a JSON array's rows, one a line: the comma that ends all but the last is left out)
  const [header, ...rows] = body.split('\n');
  return [header, ...rows.map((row) => row.replace(/,$/, '')).sort()].join('\n');
}

const tmp = tempDir('quorum-time-zone-');
const dataDir = (zone: Zone) => join(tmp.dir, zone);
const servers: { child: ChildProcess; closed: Promise<unknown> }[] = [];
const answers: Record<Zone, Record<string, { status: number; body: string }>> = { utc: {}, chatham: {} };

/** `quorum` in `zone`, which must succeed. */
async function inZone(zone: Zone, args: string[]): Promise<void> {
  const r = await quorumAsync(args, { QUORUM_DATA_DIR: dataDir(zone), ...ZONES[zone] });
  expect(r.status, `${zone}: quorum ${args.join(' ')}: ${r.stderr}`).toBe(0);
}

/** Serves `zone`'s directory in its zone and reads every PATHS answer with an enterprise key. */
async function answersIn(zone: Zone): Promise<void> {
  const key = createKey(dataDir(zone), { name: `time zone ${zone}`, plan: 'enterprise', scopes: [] }).key;
  const child = quorumProcess(['serve'], { QUORUM_DATA_DIR: dataDir(zone), HOST: '127.0.0.1', PORT: '0', ...ZONES[zone] });
  servers.push({ child, closed: new Promise((resolve) => child.on('close', resolve)) });
  const { url, stderr } = await serveOutcome(child);
  if (!url) throw new Error(`quorum serve (${zone}) exited: ${stderr}`);
  for (const p of PATHS) {
    const res = await fetch(url + p, { headers: { authorization: `Bearer ${key}` } });
    const body = normalized(await res.text());
    answers[zone][p] = { status: res.status, body: p.startsWith(UNORDERED) ? linesSorted(body) : body };
  }
}

beforeAll(async () => {
  const first = dataDir('utc');
  await inZone('utc', ['import', 'forecastbench', join(REPO, 'test', 'fixtures', 'forecastbench', 'valid')]);
  cpSync(first, dataDir('chatham'), { recursive: true });
  const claims = join(tmp.dir, 'claims');
  mkdirSync(claims);
  writeFileSync(join(claims, 'tz.csv'), CLAIMS);
  // the two zones side by side, each in its own directory (each zone's commands in turn)
  await Promise.all((Object.keys(ZONES) as Zone[]).map(async (zone) => {
    await inZone(zone, ['import', 'claims', 'csv', claims]);
    for (const asOf of ['2025-10-16T00:00:00Z', '2026-04-04T14:30:00Z']) await inZone(zone, ['run', '--as-of', asOf]);
    await answersIn(zone);
  }));
}, 600_000);

afterAll(async () => {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.closed;
  }
  tmp.cleanup();
});

describe('a host in Chatham with a Turkish locale publishes what a host in UTC does', () => {
  it('the same snapshot: its manifest and every table, row for row', async () => {
    const snapshot = (zone: Zone) => join(dataDir(zone), 'snapshots', readCurrent(dataDir(zone))!);
    const manifest = (zone: Zone) => normalized(readFileSync(join(snapshot(zone), 'manifest.json'), 'utf8'));
    expect(manifest('chatham')).toBe(manifest('utc'));
    const tables = readdirSync(snapshot('utc')).filter((f) => f.endsWith('.parquet')).map((f) => f.slice(0, -'.parquet'.length));
    expect(tables.length).toBeGreaterThan(40);
    const db = await openUtcInstance();
    const conn = await db.connect();
    try {
      /** Every row of `table` in `zone`'s snapshot as normalized JSON, sorted. */
      const rows = async (zone: Zone, table: string) =>
        (await conn.runAndReadAll(`SELECT to_json(t)::VARCHAR AS row FROM read_parquet(${sqlFilePath(join(snapshot(zone), `${table}.parquet`))}) AS t`))
          .getRowObjectsJS()
          .map((r) => normalized(String(r.row)))
          .sort();
      for (const table of tables) expect(await rows('chatham', table), table).toEqual(await rows('utc', table));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it("the operator's claims are read as UTC where they give no offset", () => {
    const claims = JSON.parse(answers.chatham['/api/claims/?source=tz-pundit']!.body) as { claims: { claim_id: string; made_at: string }[] };
    expect(Object.fromEntries(claims.claims.map((c) => [c.claim_id, c.made_at]))).toEqual({
      'tz-1': '2024-03-01T00:00:00.000Z',
      'tz-2': '2024-03-01T23:30:00.000Z',
      'tz-3': '2024-03-01T04:15:00.000Z',
      'tz-4': '2024-04-06T14:30:00.000Z',
      'tz-5': '2024-11-03T01:30:00.000Z',
      'tz-6': '2024-11-03T05:30:00.000Z',
    });
  });

  it('the same API answers, time filters and exports included', () => {
    for (const p of PATHS) {
      expect(answers.utc[p]!.status, p).toBe(200);
      expect(answers.chatham[p], p).toEqual(answers.utc[p]);
    }
  });
});
