/**
 * The test files' order: the slowest first. Two workers share the files; a two-minute file that
 * happened to start last (a clean clone has no timing cache, so vitest orders by file size) kept
 * one worker busy long after the other ran dry and made the suite minutes longer. The list is the
 * slowest files of a measured run (.vitest-report.json, `npm test`, 2026-11-27), longest first;
 * every other file follows in vitest's own order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOWEST = [
  'test/pipeline/rescore-on-upgrade.test.ts',
  'test/dashboard/dashboard.browser.test.ts',
  'test/pipeline/crash-safety.test.ts',
  // its set-up (a first start, about 40 s) is not in the report's file time
  'test/pipeline/end-to-end.test.ts',
  'test/dashboard/dashboard-states.browser.test.ts',
  'test/scenarios/joint-properties.test.ts',
  'test/pipeline/cli.test.ts',
  'test/pipeline/sync-venue-resolutions.test.ts',
  'test/scoring/properties.test.ts',
  'test/events/webhooks.test.ts',
  'test/pipeline/first-start.test.ts',
  'test/probability/endpoint.test.ts',
  'test/forecast/stage.test.ts',
  'test/export/lifecycle.test.ts',
  'test/forecast/conditional.test.ts',
  'test/events/stream.test.ts',
  'test/api/auth-limits.test.ts',
  'test/forecast/crash-windows.test.ts',
  'test/pipeline/resume-after-publish.test.ts',
  'test/taxonomy/prefix-index.test.ts',
  'test/scenarios/hand-computed.test.ts',
  'test/claims/import.test.ts',
  'test/forecast/kill-resume.test.ts',
  'test/warehouse/data-format.test.ts',
  'test/api/product.test.ts',
  'test/pipeline/scheduler-ticks.test.ts',
  'test/pipeline/sync-failures.test.ts',
  // added after that report, some 40 s each within `npm test` (7-17 s alone), so that neither
  // starts last in vitest's own order
  'test/api/snapshot-retirement.test.ts',
  'test/pipeline/time-zone.test.ts',
  'test/api/service-resources.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rest = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = SLOWEST.findIndex((s) => f.moduleId.endsWith(s));
      return i === -1 ? SLOWEST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return [...rest].sort((a, b) => rank(a) - rank(b));
  }
}
