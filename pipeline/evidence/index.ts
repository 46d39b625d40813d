/**
 * The evidence providers a run uses, from configuration: `QUORUM_EVIDENCE_PROVIDERS` (comma list,
 * default `local`): `local` = local evidence files (`QUORUM_EVIDENCE_DIR`) plus the bundled
 * sample's question backgrounds; `gdelt` = the GDELT DOC 2.0 news search (`QUORUM_GDELT_URL`).
 */
import type { QuorumConfig } from '../config.ts';
import { createGdeltProvider } from './gdelt.ts';
import { createLocalEvidenceProvider } from './local.ts';
import type { EvidenceProvider } from './types.ts';

export type { EvidenceProvider, EvidenceRow } from './types.ts';
export { gatherEvidence } from './gather.ts';

export function createEvidenceProviders(config: QuorumConfig): EvidenceProvider[] {
  return config.evidenceProviders.map((name) =>
    name === 'gdelt'
      ? createGdeltProvider({
          baseUrl: config.gdeltUrl,
          minIntervalMs: config.gdeltMinIntervalMs,
          lookbackDays: config.evidenceLookbackDays,
        })
      : createLocalEvidenceProvider({ dir: config.evidenceDir, forecastBenchDirs: [config.sampleDir] }),
  );
}
