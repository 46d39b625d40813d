/**
 * The evidence providers a run uses, from configuration: `QUORUM_EVIDENCE_PROVIDERS` (comma list,
 * default `local`): `local` = local evidence files (`QUORUM_EVIDENCE_DIR`) plus the bundled
 * sample's question backgrounds; `gdelt` = the GDELT DOC 2.0 news search (`QUORUM_GDELT_URL`).
 *
 * One GDELT provider per process (per base URL, pacing and lookback): its pacing, turns and pause
 * are GDELT's limit on this host, not on one caller. `quorum start` makes providers for the
 * probability endpoint and for every scheduled run; each had its own client pacing at one request
 * every 5 s, so GDELT got two requests in 5 s during a run's evidence stage. The local provider is
 * made anew each time (a run reads the evidence files as they are then).
 */
import type { QuorumConfig } from '../config.ts';
import { createGdeltProvider, type GdeltProvider } from './gdelt.ts';
import { createLocalEvidenceProvider } from './local.ts';
import type { EvidenceProvider } from './types.ts';

export type { EvidenceProvider, EvidenceRow } from './types.ts';
export { gatherEvidence } from './gather.ts';

const gdeltProviders = new Map<string, GdeltProvider>();

/** The process's GDELT provider for these settings (made on first use). */
function sharedGdeltProvider(config: QuorumConfig): GdeltProvider {
  const key = JSON.stringify([config.gdeltUrl, config.gdeltMinIntervalMs, config.evidenceLookbackDays]);
  let p = gdeltProviders.get(key);
  if (!p) {
    p = createGdeltProvider({ baseUrl: config.gdeltUrl, minIntervalMs: config.gdeltMinIntervalMs, lookbackDays: config.evidenceLookbackDays });
    gdeltProviders.set(key, p);
  }
  return p;
}

export function createEvidenceProviders(config: QuorumConfig): EvidenceProvider[] {
  return config.evidenceProviders.map((name) =>
    name === 'gdelt'
      ? sharedGdeltProvider(config)
      : createLocalEvidenceProvider({ dir: config.evidenceDir, forecastBenchDirs: [config.sampleDir] }),
  );
}
