/**
 * The dashboard's build made current before `quorum serve` and `quorum start` serve it. It is
 * built by `npm start` and `npm test` (prestart/pretest) or `npm run build:dashboard`; a checkout
 * updated in place and started with `quorum start` served the previous release's dashboard, with
 * nothing to say so (QA upgrade pass: "Resolved annulled on …" after the fix that removed it).
 * The build lists what it was made from (dist/inputs.json, as the prebuilt CLI's); one that is
 * missing or that its sources have moved past is rebuilt (esbuild, about a second). A build that
 * fails (a read-only checkout) is a warning: the API serves on, with the last build if any.
 */
import type { Logger } from '../log.ts';
import { CHECKOUT, currentPrebuilt, DASHBOARD_DIST } from './prebuilt.js';

export async function ensureDashboardBuilt(logger: Logger, dir: string = DASHBOARD_DIST): Promise<'current' | 'built' | 'failed'> {
  if (currentPrebuilt(dir, CHECKOUT, 'app.js') !== null) return 'current';
  try {
    // loaded only to build (esbuild): a start with a current build does not pay for it
    const { buildDashboard } = await import('../../scripts/build-dashboard.ts');
    await buildDashboard(dir, { logLevel: 'silent' });
    logger.info({ dir }, 'dashboard built: it had no build, or its sources changed since the last one');
    return 'built';
  } catch (err) {
    logger.warn({ err, dir }, 'the dashboard could not be built (npm run build:dashboard): the API serves on, with the last build if there is one');
    return 'failed';
  }
}
