/**
 * Every route of the API, in registration order (see api/http/registry.ts for how to add one).
 */
import type { RouteDef } from '../http/registry.ts';
import { docsRoute, openapiRoute } from './docs.ts';
import { eventsAccuracyRoute } from './events-accuracy.ts';
import { eventsLangRoute } from './events-lang.ts';
import { exportRouteDoc } from './export-doc.ts';
import { dashboardAssetRoute, faviconIcoRoute, faviconSvgRoute, frontDoorRoute } from './front-door.ts';
import { healthRoute, metricsRoute, readyRoute } from './health.ts';
import { analysisAnchoringRoute } from './analysis-anchoring.ts';
import { analysisDisagreementRoute } from './analysis-disagreement.ts';
import { analysisInformationValueRoute } from './analysis-information-value.ts';
import { analysisResolutionSourcesRoute } from './analysis-resolution-sources.ts';
import { leaderboardRoute } from './leaderboard.ts';
import { rankingsRoute } from './rankings.ts';
import { predictionsAccuracyCategoryRoute, predictionsAccuracyRoute } from './predictions-accuracy.ts';
import { predictionsDetailRoute } from './predictions-detail.ts';
import { predictionsEdgesRoute } from './predictions-edges.ts';
import { predictionsLangRoute } from './predictions-lang.ts';
import { predictionsLifecycleRoute } from './predictions-lifecycle.ts';
import { taxonomyHistoryRoute } from './taxonomy-history.ts';
import { predictionsResolvedRoute } from './predictions-resolved.ts';
import { serviceStatsRoute } from './service-stats.ts';
import { usageRoute } from './usage.ts';
import { probabilityRequestRoute, probabilityRoute } from './probability.ts';
import { streamRoute } from './stream.ts';
import { WEBHOOK_ROUTES } from './webhooks.ts';
import { trackRecordsOverviewRoute, trackRecordsSourceRoute, trackRecordsTrendsRoute } from './track-records.ts';
import { claimsDetailRoute, claimsListRoute } from './claims.ts';
import { clustersDetailRoute, clustersRoute } from './clusters.ts';
import { scenariosDetailRoute, scenariosRoute } from './scenarios.ts';
import { factorsDetailRoute, factorsHealthRoute, factorsRoute } from './factors.ts';

export const ROUTES: readonly RouteDef[] = [
  healthRoute,
  readyRoute,
  metricsRoute,
  openapiRoute,
  docsRoute,
  frontDoorRoute,
  faviconSvgRoute,
  faviconIcoRoute,
  dashboardAssetRoute,
  predictionsAccuracyRoute,
  predictionsAccuracyCategoryRoute,
  predictionsResolvedRoute,
  eventsAccuracyRoute,
  serviceStatsRoute,
  usageRoute,
  exportRouteDoc, // documentation only: mounted by api/export/routes.ts (see app.ts)
  predictionsEdgesRoute,
  predictionsLangRoute,
  predictionsLifecycleRoute,
  taxonomyHistoryRoute,
  eventsLangRoute,
  leaderboardRoute,
  rankingsRoute,
  analysisDisagreementRoute,
  probabilityRoute,
  probabilityRequestRoute,
  analysisInformationValueRoute,
  analysisAnchoringRoute,
  analysisResolutionSourcesRoute,
  trackRecordsOverviewRoute,
  trackRecordsSourceRoute,
  trackRecordsTrendsRoute,
  claimsListRoute,
  claimsDetailRoute,
  clustersRoute,
  clustersDetailRoute,
  scenariosRoute,
  scenariosDetailRoute,
  // /api/factors/health/ before /api/factors/{factor_id}/, which would match 'health'
  factorsHealthRoute,
  factorsRoute,
  factorsDetailRoute,
  streamRoute,
  ...WEBHOOK_ROUTES,
  // KEEP LAST among /api/predictions/... routes: `/api/predictions/{market_id}` matches any single
  // segment (Express matches in registration order), so every fixed /api/predictions/<name> path
  // must be registered before it.
  predictionsDetailRoute,
];
