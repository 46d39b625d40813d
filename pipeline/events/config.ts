/**
 * Settings of the events (issue 15), from the environment and validated with zod like
 * pipeline/config.ts: a bad value is an error naming the variable.
 */
import { z } from 'zod';
import { booleanSetting, decimalNumber, settingIssue, setVariables, wholeNumber } from '../env.ts';

const EventsEnv = z.object({
  /** consensus.updated: the headline consensus moved at least this much (probability points). */
  QUORUM_EVENTS_CONSENSUS_THRESHOLD: decimalNumber(z.number().gt(0).max(1)).default(0.05),
  /** edge.opened / edge.closed: |consensus − market| crosses this (probability points). */
  QUORUM_EVENTS_EDGE_THRESHOLD: decimalNumber(z.number().gt(0).max(1)).default(0.05),
  /** How long the stream can resume from an event (Last-Event-ID / since), in days. */
  QUORUM_EVENTS_RETENTION_DAYS: decimalNumber(z.number().gt(0).max(3650)).default(7),
  /** How often the API looks for newly written events, in ms. */
  QUORUM_EVENTS_POLL_MS: wholeNumber(10, 60_000).default(250),
  /** SSE heartbeat comment interval, in ms. */
  QUORUM_STREAM_HEARTBEAT_MS: wholeNumber(10, 600_000).default(15_000),
  /** A stream client whose unsent buffer exceeds this many bytes is disconnected (told how to resume). */
  QUORUM_STREAM_MAX_BUFFER_BYTES: wholeNumber(1024, 256 * 1024 * 1024).default(1024 * 1024),
  /** Streams open at once (each is a socket and a small buffer). */
  QUORUM_STREAM_MAX_CLIENTS: wholeNumber(1, 100_000).default(2000),
  /** Streams one key may have open at once (one key could otherwise take every slot). */
  QUORUM_STREAM_MAX_PER_KEY: wholeNumber(1, 100_000).default(10),
  /** Webhooks: allow http URLs and private, loopback or link-local addresses (tests, private networks). */
  QUORUM_WEBHOOKS_ALLOW_PRIVATE: booleanSetting().default(false),
  /** Webhooks: one delivery attempt's deadline, in ms. */
  QUORUM_WEBHOOKS_TIMEOUT_MS: wholeNumber(10, 120_000).default(10_000),
  /** Webhooks: how long a failing delivery is retried before the subscription is disabled, in ms. */
  QUORUM_WEBHOOKS_RETRY_WINDOW_MS: wholeNumber(100, 30 * 86_400_000).default(86_400_000),
  /** Webhooks: first retry delay (doubles per attempt, with jitter) and its cap, in ms. */
  QUORUM_WEBHOOKS_BACKOFF_MS: wholeNumber(1, 3_600_000).default(5000),
  QUORUM_WEBHOOKS_MAX_BACKOFF_MS: wholeNumber(1, 86_400_000).default(3_600_000),
  /** Webhooks: deliveries in flight at once (one per subscription at a time: per subscription in order). */
  QUORUM_WEBHOOKS_CONCURRENCY: wholeNumber(1, 10_000).default(64),
  /** Webhooks: subscriptions one key may have (each gets every event it asks for, sent to its URL). */
  QUORUM_WEBHOOKS_MAX_PER_KEY: wholeNumber(1, 10_000).default(20),
});

export interface EventsConfig {
  consensusThreshold: number;
  edgeThreshold: number;
  retentionMs: number;
  pollMs: number;
  heartbeatMs: number;
  maxBufferBytes: number;
  maxClients: number;
  maxPerKey: number;
  webhooks: WebhooksConfig;
}

export interface WebhooksConfig {
  allowPrivate: boolean;
  timeoutMs: number;
  retryWindowMs: number;
  backoffMs: number;
  maxBackoffMs: number;
  concurrency: number;
  maxPerKey: number;
}

/** Reads and validates the events settings; throws an Error naming each bad variable. */
export function loadEventsConfig(env: NodeJS.ProcessEnv = process.env): EventsConfig {
  // (an empty value is unset, as in every loader: pipeline/env.ts)
  const given = setVariables(env);
  const parsed = EventsEnv.safeParse(given);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => settingIssue(i, given)).join('; ');
    throw new Error(`invalid events configuration: ${msg}`);
  }
  const e = parsed.data;
  // A first delay above the cap: every retry waited the cap, the backoff set ignored without a
  // word (QA); refused, as the health thresholds' contradictions are.
  if (e.QUORUM_WEBHOOKS_BACKOFF_MS > e.QUORUM_WEBHOOKS_MAX_BACKOFF_MS) {
    throw new Error(
      `invalid events configuration: QUORUM_WEBHOOKS_BACKOFF_MS: must not exceed QUORUM_WEBHOOKS_MAX_BACKOFF_MS (${e.QUORUM_WEBHOOKS_BACKOFF_MS} > ${e.QUORUM_WEBHOOKS_MAX_BACKOFF_MS})`,
    );
  }
  return {
    consensusThreshold: e.QUORUM_EVENTS_CONSENSUS_THRESHOLD,
    edgeThreshold: e.QUORUM_EVENTS_EDGE_THRESHOLD,
    retentionMs: e.QUORUM_EVENTS_RETENTION_DAYS * 86_400_000,
    pollMs: e.QUORUM_EVENTS_POLL_MS,
    heartbeatMs: e.QUORUM_STREAM_HEARTBEAT_MS,
    maxBufferBytes: e.QUORUM_STREAM_MAX_BUFFER_BYTES,
    maxClients: e.QUORUM_STREAM_MAX_CLIENTS,
    maxPerKey: e.QUORUM_STREAM_MAX_PER_KEY,
    webhooks: {
      allowPrivate: e.QUORUM_WEBHOOKS_ALLOW_PRIVATE,
      timeoutMs: e.QUORUM_WEBHOOKS_TIMEOUT_MS,
      retryWindowMs: e.QUORUM_WEBHOOKS_RETRY_WINDOW_MS,
      backoffMs: e.QUORUM_WEBHOOKS_BACKOFF_MS,
      maxBackoffMs: e.QUORUM_WEBHOOKS_MAX_BACKOFF_MS,
      concurrency: e.QUORUM_WEBHOOKS_CONCURRENCY,
      maxPerKey: e.QUORUM_WEBHOOKS_MAX_PER_KEY,
    },
  };
}
