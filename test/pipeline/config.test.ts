/**
 * Configuration from the environment: an empty or whitespace-only value is unset in every loader
 * (QA: `QUORUM_LIMIT_ANONYMOUS_PER_HOUR=" "` was coerced to 0, "unlimited", and `PORT=" "` to a
 * random port; an empty events variable was refused while every other loader read it as unset).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../pipeline/config.ts';
import { loadEventsConfig } from '../../pipeline/events/config.ts';
import { loadIpfSweeps } from '../../pipeline/scenarios/stage.ts';

describe('an empty or blank value is unset', () => {
  it('in the main configuration: the defaults apply', () => {
    const defaults = loadConfig({});
    const blank = loadConfig({ PORT: ' ', QUORUM_LIMIT_ANONYMOUS_PER_HOUR: ' \t', QUORUM_KEEP_SNAPSHOTS: '' });
    expect(blank.port).toBe(defaults.port);
    expect(blank.limits.anonymousPerHour).toBe(defaults.limits.anonymousPerHour);
    expect(blank.limits.anonymousPerHour).toBeGreaterThan(0);
    expect(blank.keepSnapshots).toBe(defaults.keepSnapshots);
    // a value that is set is still checked
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('in the events and the stages settings too', () => {
    expect(loadEventsConfig({ QUORUM_EVENTS_CONSENSUS_THRESHOLD: '' }).consensusThreshold).toBe(loadEventsConfig({}).consensusThreshold);
    expect(loadIpfSweeps({ QUORUM_SCENARIO_IPF_SWEEPS: '  ' })).toBe(loadIpfSweeps({}));
    expect(() => loadIpfSweeps({ QUORUM_SCENARIO_IPF_SWEEPS: '0' })).toThrow(/QUORUM_SCENARIO_IPF_SWEEPS/);
  });
});
