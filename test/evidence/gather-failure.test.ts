/**
 * A failure of a question's own work while gathering evidence (the run's journal append, on a full
 * disk) fails the gathering, and so the run, as a failure: it is not an unhandled rejection that
 * kills the process (QA: `quorum run` died with Node's raw stack trace and no summary; under
 * `quorum start` the API server itself died with its scheduled run).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createLocalEvidenceProvider } from '../../pipeline/evidence/local.ts';
import { gatherEvidence } from '../../pipeline/evidence/gather.ts';
import type { TaskQuestion } from '../../pipeline/models/prompts.ts';
import { CLI, quorum, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const q = (question_id: string): TaskQuestion => ({
  question_id, title: 't', description: null, resolution_criteria: null, url: null, created_at: null, close_time: null, category: null, domain: null,
});
const tmp = tempDir('quorum-gather-fail-');
afterAll(() => tmp.cleanup());

describe('gathering evidence when onQuestion throws', () => {
  it('rejects with that error, and starts no new question', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorum-ev-'));
    const lines = Array.from({ length: 20 }, (_, i) => JSON.stringify({ question_id: `x:${i}`, title: `Report ${i}`, url: `https://a/${i}`, published_at: '2025-10-01T00:00:00Z', snippet: 's' }));
    writeFileSync(join(dir, 'a.jsonl'), `${lines.join('\n')}\n`);
    const told: string[] = [];
    const full = Object.assign(new Error('EFBIG: file too large, write'), { code: 'EFBIG' });
    const gathering = gatherEvidence(
      Array.from({ length: 20 }, (_, i) => q(`x:${i}`)),
      {
        providers: [createLocalEvidenceProvider({ dir })],
        asOf: new Date('2025-10-16T00:00:00Z'),
        maxPerQuestion: 5,
        concurrency: 2,
        onQuestion: (qid) => {
          told.push(qid);
          if (told.length === 3) throw full;
        },
      },
    );
    await expect(gathering).rejects.toBe(full);
    expect(told.length).toBeLessThan(20); // the rest were not started
  });
});

describe('quorum run on a disk that fills up while journaling evidence', () => {
  it('fails as a run (summary, exit 1, journal kept), and --resume finishes it', () => {
    const env = { QUORUM_DATA_DIR: join(tmp.dir, 'w'), QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', QUORUM_MAX_QUESTIONS: '100', QUORUM_MODES: 'augmented', QUORUM_SIMULATOR_LATENCY_MS: '2' };
    expect(quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], env).status).toBe(0);
    // RLIMIT_FSIZE: a write past 64 KiB fails with EFBIG (Node ignores SIGXFSZ), as on a full disk;
    // the evidence lines are the first to take the journal past it.
    const r = spawnSync('bash', ['-c', `ulimit -f 64 && exec "${process.execPath}" "${CLI}" run`], {
      cwd: REPO,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(r.stderr).not.toMatch(/^Node\.js v/m); // no crash of the process
    expect(r.status, r.stderr).toBe(1);
    const summary = JSON.parse(r.stdout) as { run_id: string; status: string; error: string };
    expect(summary).toMatchObject({ status: 'failed', error: expect.stringContaining('EFBIG') });
    expect(r.stderr).toContain(`quorum run --resume ${summary.run_id}`);

    const resumed = quorum(['run', '--resume'], env);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: summary.run_id, status: 'completed', resumed: true });
  }, 400_000);
});
