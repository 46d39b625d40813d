/**
 * Every venue a question can come from: those `quorum sync` reads, those of the ForecastBench
 * import, and `quorum` (operators' question files). One list for the API's `venue` filter and for
 * the claims import, which keeps these names' slugs for the venues' own track records.
 */
import { VENUES as FORECASTBENCH_VENUES } from '../import/forecastbench.ts';
import { QUORUM_VENUE } from '../questions/question-file.ts';
import { VENUES as SYNC_VENUES } from './types.ts';

export const KNOWN_VENUES: readonly string[] = [...new Set<string>([...SYNC_VENUES, ...FORECASTBENCH_VENUES, QUORUM_VENUE])].sort();
