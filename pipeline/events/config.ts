/**
 * Settings of the events (issue 15), from the environment and validated with zod like
 * pipeline/config.ts: a bad value is an error naming the variable.
 */
import { z } from 'zod';

const EventsEnv = z.object({
  /** consensus.updated: the headline consensus moved at least this much (probability points). */
  QUORUM_EVENTS_CONSENSUS_THRESHOLD: z.coerce.number().gt(0).max(1).default(0.05),
  /** edge.opened / edge.closed: |consensus − market| crosses this (probability points). */
  QUORUM_EVENTS_EDGE_THRESHOLD: z.coerce.number().gt(0).max(1).default(0.05),
  /** How long the stream can resume from an event (Last-Event-ID / since), in days. */
  QUORUM_EVENTS_RETENTION_DAYS: z.coerce.number().gt(0).max(3650).default(7),
  /** How often the API looks for newly written events, in ms. */
  QUORUM_EVENTS_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  /** SSE heartbeat comment interval, in ms. */
  QUORUM_STREAM_HEARTBEAT_MS: z.coerce.number().int().min(10).max(600_000).default(15_000),
  /** A stream client whose unsent buffer exceeds this many bytes is disconnected (told how to resume). */
  QUORUM_STREAM_MAX_BUFFER_BYTES: z.coerce.number().int().min(1024).max(256 * 1024 * 1024).default(1024 * 1024),
  /** Streams open at once (each is a socket and a small buffer). */
  QUORUM_STREAM_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(2000),
});

export interface EventsConfig {
  consensusThreshold: number;
  edgeThreshold: number;
  retentionMs: number;
  pollMs: number;
  heartbeatMs: number;
  maxBufferBytes: number;
  maxClients: number;
}

/** Reads and validates the events settings; throws an Error naming each bad variable. */
export function loadEventsConfig(env: NodeJS.ProcessEnv = process.env): EventsConfig {
  const parsed = EventsEnv.safeParse(env);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid events configuration: ${msg}`);
  }
  const e = parsed.data;
  return {
    consensusThreshold: e.QUORUM_EVENTS_CONSENSUS_THRESHOLD,
    edgeThreshold: e.QUORUM_EVENTS_EDGE_THRESHOLD,
    retentionMs: e.QUORUM_EVENTS_RETENTION_DAYS * 86_400_000,
    pollMs: e.QUORUM_EVENTS_POLL_MS,
    heartbeatMs: e.QUORUM_STREAM_HEARTBEAT_MS,
    maxBufferBytes: e.QUORUM_STREAM_MAX_BUFFER_BYTES,
    maxClients: e.QUORUM_STREAM_MAX_CLIENTS,
  };
}
