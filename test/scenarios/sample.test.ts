/**
 * Issue 13 on the real bundled sample: the bundled scenarios are published over the imported
 * ForecastBench sample with every component, their joints from four models' forecasts, a record
 * archived per run while a component is open, and those records scored once the sample's
 * resolutions are visible (wholly for some scenarios, in part for others).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenarioDefinitions } from '../../pipeline/scenarios/definitions.ts';
import { DEFAULT_STRUCTURE_DIR } from '../../pipeline/structure/definitions.ts';
import { sampleFixture, forecasts, publish, rawRows, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const defs = loadScenarioDefinitions(DEFAULT_STRUCTURE_DIR);

describe('bundled scenarios over the imported sample', () => {
  let f: Fixture;
  let early: string;
  let late: string;
  // The sample's newest question appears on 2026-03-05: the early run sees every component.
  const FORECAST_AT = new Date('2026-03-05T12:00:00Z');
  beforeAll(async () => {
    f = await sampleFixture();
    // Four models forecast every component (the sample holds no model forecasts): spread values.
    const components = [...new Set(defs.flatMap((s) => s.components.map((c) => c.question)))];
    await writeRaw(
      f.dataDir,
      { forecasts: components.flatMap((q, i) => forecasts('r-sample-scenarios', q, FORECAST_AT, [0.1, 0.3, 0.5, 0.7].map((p) => (p + i * 0.07) % 0.9 + 0.05))) },
      FORECAST_AT,
    );
    f.structureDir = DEFAULT_STRUCTURE_DIR;
    early = await publish(f, new Date('2026-03-06T00:00:00Z'));
    late = await publish(f, new Date('2026-09-01T00:00:00Z'));
  });
  afterAll(() => f.cleanup());

  it('every bundled scenario is published with all its components, in pathway order', async () => {
    const scenarios = await snapshotRows(f.dataDir, late, `SELECT * FROM {scenarios} ORDER BY scenario_id`);
    expect(scenarios.map((s) => s.scenario_id)).toEqual(defs.map((d) => d.id).sort());
    const comps = await snapshotRows(f.dataDir, late, `SELECT * FROM {scenario_components} ORDER BY scenario_id, ord`);
    for (const d of defs) {
      const row = scenarios.find((s) => s.scenario_id === d.id)!;
      expect(row).toMatchObject({ title: d.title, n_components: d.components.length, n_worlds: 2 ** d.components.length, n_models: 4 });
      expect(comps.filter((c) => c.scenario_id === d.id).map((c) => c.question_id)).toEqual(d.components.map((c) => c.question));
    }
  });

  it('every joint sums to 1; the consensus joints are independent products (no conditionals yet)', async () => {
    const sums = await snapshotRows(f.dataDir, late, `SELECT scenario_id, source, model, sum(probability) AS total, count(*) AS n, string_agg(DISTINCT method, ',') AS m FROM {scenario_worlds} GROUP BY ALL`);
    expect(sums.length).toBe(defs.length * 5);
    for (const s of sums) {
      expect(s.total).toBeCloseTo(1, 12);
      expect(s.m).toBe('independent');
    }
    const gaps = await snapshotRows(f.dataDir, late, `SELECT max(abs(coherence_gap)) AS g FROM {scenario_marginals}`);
    expect(gaps[0]!.g).toBeLessThan(1e-12);
  });

  it('the early run archived a record per open scenario; the late run scores them, wholly and in part', async () => {
    const raw = await rawRows(f.dataDir, 'scenario_archive');
    const earlyIds = new Set(raw.filter((r) => r.run_id === early).map((r) => r.scenario_id));
    // Every scenario but the Fed's 2025 endgame, resolved by then: nothing left to forecast.
    expect([...earlyIds].sort()).toEqual(defs.map((d) => d.id).filter((id) => id !== 'fed-2025-endgame').sort());
    const scores = await snapshotRows(f.dataDir, late, `SELECT * FROM {scenario_record_scores} WHERE run_id = '${early}'`);
    const complete = scores.filter((s) => s.complete);
    const partial = scores.filter((s) => !s.complete && s.n_resolved > 0);
    expect(complete.length).toBeGreaterThanOrEqual(2);
    expect(partial.length).toBeGreaterThanOrEqual(1);
    for (const s of complete) {
      expect(s.realized_world).toMatch(/^[01]+$/);
      expect(s.log_score).toBeCloseTo(Math.log(s.realized_probability), 12);
      expect(s.brier).toBeGreaterThanOrEqual(0);
      expect(s.brier).toBeLessThanOrEqual(2);
    }
    for (const s of partial) {
      expect(s.consistent_mass).toBeGreaterThan(0);
      expect(s.consistent_mass).toBeLessThan(1);
      expect(s.partial_log_score).toBeCloseTo(Math.log(s.consistent_mass), 12);
    }
    // Resolved at the late run: Bitcoin's March slide (none of it), Claude 5 (only Anthropic on top).
    expect(complete.map((s) => [s.scenario_id, s.realized_world]).sort()).toEqual([
      ['bitcoin-march-2026-slide', '0000'],
      ['claude-5-spring-2026', '001'],
    ]);
    expect(partial.map((s) => s.scenario_id).sort()).toEqual(['fed-2026-path', 'iran-regime-2026', 'us-iran-escalation-2026']);
    const status = await snapshotRows(f.dataDir, late, `SELECT scenario_id, status, n_records FROM {scenarios} ORDER BY 1`);
    expect(status.filter((s) => s.status === 'resolved').map((s) => s.scenario_id)).toEqual(['bitcoin-march-2026-slide', 'claude-5-spring-2026', 'fed-2025-endgame']);
    expect(status.find((s) => s.scenario_id === 'fed-2025-endgame')!.n_records).toBe(0);
    // The late run archived the scenarios still open, one row per record with a probability per
    // world that sum to 1.
    const lateRows = raw.filter((r) => r.run_id === late);
    const lateIds = lateRows.map((r) => r.scenario_id).sort();
    expect(lateIds).toEqual(['fed-2026-path', 'iran-regime-2026', 'russia-ukraine-endgame', 'us-iran-escalation-2026']);
    for (const r of lateRows) {
      const n = defs.find((d) => d.id === r.scenario_id)!.components.length;
      expect(r.probabilities).toHaveLength(2 ** n);
      expect(r.marginals).toHaveLength(n);
      expect(r.probabilities.reduce((a: number, p: number) => a + p, 0)).toBeCloseTo(1, 12);
    }
  });
});
