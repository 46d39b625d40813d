/**
 * The event types, in a module that imports nothing: the webhooks CLI and the API's stream and
 * webhook routes check names against them, and reaching them through emit.ts loaded DuckDB into
 * every `quorum` command (emit.ts compares snapshots in DuckDB).
 */
/** The event types, in the order a run writes them. */
export const EVENT_TYPES = [
  'consensus.updated',
  'edge.opened',
  'edge.closed',
  'question.resolved',
  'question.annulled',
  'score.posted',
  'run.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
