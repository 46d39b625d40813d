/**
 * The data directory's format marker (pipeline/warehouse/data-format.ts), through the real CLI: a
 * writing command marks a directory; every command refuses a directory a newer version marked,
 * before it reads or writes anything (an operator rolling back after an upgrade), and says which
 * formats are involved.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { quorum, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { DATA_FORMAT, dataFormatFile } from '../../pipeline/warehouse/data-format.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { silentLogger } from '../../pipeline/log.ts';

const tmp = tempDir('quorum-data-format-');
afterAll(() => tmp.cleanup());

const sample = join(REPO, 'data', 'sample', 'forecastbench');
const offline = { QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', PORT: '0', HOST: '127.0.0.1' };

/** Every file under `dir` with its size and mtime: what a refused command must leave as it was. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(dir, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

describe('the data format marker', () => {
  it('a writing command marks a new directory with this version\'s format; a reading one leaves an unmarked directory as it is', () => {
    const data = join(tmp.dir, 'fresh');
    const r = quorum(['import', 'forecastbench', sample], { ...offline, QUORUM_DATA_DIR: data });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(dataFormatFile(data), 'utf8'))).toEqual({ format: DATA_FORMAT });

    // A directory made before the marker existed is read as format 1, and not marked by a read.
    const old = join(tmp.dir, 'unmarked');
    mkdirSync(old);
    const list = quorum(['keys', 'list', '--json'], { ...offline, QUORUM_DATA_DIR: old });
    expect(list.status, list.stderr).toBe(0);
    expect(readdirSync(old)).not.toContain('FORMAT');
  });

  it('every command refuses a directory a newer version wrote, naming both formats, and changes nothing in it', () => {
    const data = join(tmp.dir, 'newer');
    expect(quorum(['import', 'forecastbench', sample], { ...offline, QUORUM_DATA_DIR: data }).status).toBe(0);
    writeFileSync(dataFormatFile(data), JSON.stringify({ format: DATA_FORMAT + 1 }));
    const before = listing(data);
    const claims = join(tmp.dir, 'claims');
    mkdirSync(claims, { recursive: true });
    writeFileSync(join(claims, 'claims.csv'), 'source,claim_id,made_at,subject,kind,probability\n');
    const commands = [
      ['import', 'forecastbench', sample],
      ['import', 'claims', 'csv', claims],
      ['run', '--score-only'],
      ['sync', '--json'],
      ['serve'],
      ['start'],
      ['keys', 'list'],
      ['keys', 'create', '--plan', 'api', '--name', 'rollback'],
      ['webhooks', 'list'],
    ];
    for (const args of commands) {
      const r = quorum(args, { ...offline, QUORUM_DATA_DIR: data }, 60_000);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr, args.join(' ')).toContain(
        `was written by a newer version of Quorum (data format ${DATA_FORMAT + 1}; this version reads formats up to ${DATA_FORMAT})`,
      );
      expect(r.stdout, args.join(' ')).toBe('');
    }
    expect(listing(data)).toEqual(before);
  });

  it("a run checks again under the run lock: a server's scheduled run does not write into a directory a newer version marked since the server started", async () => {
    const data = join(tmp.dir, 'marked-while-serving');
    expect(quorum(['import', 'forecastbench', sample], { ...offline, QUORUM_DATA_DIR: data }).status).toBe(0);
    writeFileSync(dataFormatFile(data), JSON.stringify({ format: DATA_FORMAT + 1 }));
    const before = listing(data);
    const config = loadConfig({ QUORUM_DATA_DIR: data, LOG_LEVEL: 'silent', QUORUM_VENUES: 'none' });
    await expect(runPipeline({ config, logger: silentLogger(), scoreOnly: true, resume: false })).rejects.toThrow(
      `was written by a newer version of Quorum (data format ${DATA_FORMAT + 1}`,
    );
    expect(listing(data)).toEqual(before);
  });

  it('a marker that is not one is refused, naming the file', () => {
    const data = join(tmp.dir, 'garbage');
    mkdirSync(data);
    for (const text of ['{"format": "2"}', '{"format": 0}', '{"format": 1.5}', 'format 1', '']) {
      writeFileSync(dataFormatFile(data), text);
      const r = quorum(['run', '--score-only'], { ...offline, QUORUM_DATA_DIR: data }, 60_000);
      expect(r.status, text).toBe(1);
      expect(r.stderr, text).toContain(`${dataFormatFile(data)} is not a Quorum data format marker`);
    }
    expect(readdirSync(data)).toEqual(['FORMAT']);
  });
});
