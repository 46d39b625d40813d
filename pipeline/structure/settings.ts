/**
 * The structure stage's settings (QUORUM_STRUCTURE_DIR and the linking thresholds), apart from
 * the stage itself (./stage.ts) so that checking them at a command's start
 * (pipeline/stage-settings.ts) loads no DuckDB: a command refused for a bad setting starts on less.
 */
import { z } from 'zod';
import { decimalNumber, envSettings, wholeNumber } from '../env.ts';
import { StructureDirEnv } from './definitions.ts';

const StructureEnv = StructureDirEnv.extend({
  // QUORUM_STRUCTURE_DIR (definitions.ts): the directory of the curated definitions (links/, theses/).
  /** similar: TF-IDF cosine of title + description at least this. */
  QUORUM_LINK_SIMILAR_THRESHOLD: decimalNumber(z.number().gt(0).max(1)).default(0.35),
  /** same_event: title cosine at least this, on different venues. */
  QUORUM_LINK_SAME_EVENT_THRESHOLD: decimalNumber(z.number().gt(0).max(1)).default(0.6),
  /** Computed clusters join questions linked at least this strongly. */
  QUORUM_CLUSTER_THRESHOLD: decimalNumber(z.number().gt(0).max(1)).default(0.5),
  /** Blocking: a term held by more documents of a category than this does not pair them. */
  QUORUM_LINK_MAX_TERM_DF: wholeNumber(2, 1_000_000).default(100),
  /** Computed clusters larger than this are chains, not theses, and are left out. */
  QUORUM_CLUSTER_MAX_SIZE: wholeNumber(3, 10_000).default(40),
});

export interface StructureParams {
  similarThreshold: number;
  sameEventThreshold: number;
  clusterThreshold: number;
  maxTermDf: number;
  maxClusterSize: number;
}

export interface StructureConfig {
  dir: string;
  params: StructureParams;
}

/** The structure settings from the environment; a bad value is an error naming the variable. */
export function loadStructureConfig(env: NodeJS.ProcessEnv = process.env): StructureConfig {
  const e = envSettings(StructureEnv, env);
  return {
    dir: e.QUORUM_STRUCTURE_DIR,
    params: {
      similarThreshold: e.QUORUM_LINK_SIMILAR_THRESHOLD,
      sameEventThreshold: e.QUORUM_LINK_SAME_EVENT_THRESHOLD,
      clusterThreshold: e.QUORUM_CLUSTER_THRESHOLD,
      maxTermDf: e.QUORUM_LINK_MAX_TERM_DF,
      maxClusterSize: e.QUORUM_CLUSTER_MAX_SIZE,
    },
  };
}
