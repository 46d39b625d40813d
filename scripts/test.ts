/**
 * `npm test`: the whole suite through vitest, then a final countable line `N passed, M failed`
 * read from vitest's JSON reporter. Extra arguments are passed to vitest (e.g. a file filter).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const report = join(process.cwd(), '.vitest-report.json');
rmSync(report, { force: true });
const vitest = join(process.cwd(), 'node_modules', 'vitest', 'vitest.mjs');
const result = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8' } },
);

let passed = 0;
let failed = 0;
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    testResults: { status: string; assertionResults: unknown[] }[];
  };
  passed = json.numPassedTests;
  // A test file that fails to load (no assertions ran) counts as a failure too.
  const brokenFiles = json.testResults.filter((f) => f.status === 'failed' && f.assertionResults.length === 0);
  failed = json.numFailedTests + brokenFiles.length;
} else {
  failed = 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(result.status === 0 && failed === 0 ? 0 : 1);
