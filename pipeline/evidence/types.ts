/**
 * Evidence for the augmented mode (DESIGN §6): a provider interface and the `evidence` row shape.
 *
 * A provider returns items for one question as of a point in time. The as-of rule (DESIGN §5) is
 * absolute: an item published after the run's as-of time is never returned, and an item without a
 * publication date is never used (it cannot be shown to predate the forecast). Providers filter,
 * and `gatherEvidence` filters again, so one careless provider cannot leak the future.
 */
import { createHash } from 'node:crypto';
import type { RAW_TABLES } from '../warehouse/tables.ts';
import type { TaskQuestion } from '../models/prompts.ts';

/** A raw `evidence` row (column names of `RAW_TABLES.evidence`). */
export interface EvidenceRow {
  /**
   * Deterministic: `ev-` + sha256(source_slug | question_id | url or title), 24 hex; for a local
   * evidence line, of everything it shows (an edited line is a new item: pipeline/evidence/local.ts).
   */
  evidence_id: string;
  question_id: string;
  /** When this run retrieved it (wall clock). */
  retrieved_at: Date;
  title: string | null;
  url: string | null;
  /** When it was published (for news: first seen by the source). Never after the run's as-of. */
  published_at: Date | null;
  snippet: string | null;
  /** Who published it: a venue slug for the sample's backgrounds, `gdelt` for GDELT articles, … */
  source_slug: string;
}

// Compile-time guard: the row type carries exactly the warehouse's columns.
type SameKeys<A, B> = [Exclude<A, B>, Exclude<B, A>] extends [never, never] ? true : false;
const _evidenceColumns: SameKeys<keyof EvidenceRow, keyof (typeof RAW_TABLES)['evidence']['columns']> = true;
void _evidenceColumns;

export interface RetrieveOptions {
  /** The run's as-of time: nothing published after it is returned. */
  asOf: Date;
  /** At most this many items. */
  limit: number;
  signal?: AbortSignal;
  /**
   * A caller waiting for the answer (the probability endpoint): a provider that serves its callers
   * in turns (GDELT, one per process) serves it before the questions of a run still waiting.
   */
  interactive?: boolean;
}

/** A source of evidence items for a question. */
export interface EvidenceProvider {
  /** Short name for logs and counters, e.g. "local", "gdelt". */
  readonly name: string;
  /** Items about `question` published at or before `opts.asOf`, newest first. May throw. */
  retrieve(question: TaskQuestion, opts: RetrieveOptions): Promise<EvidenceRow[]>;
  /** File-based providers: lines skipped as malformed, per file (the run logs them). */
  readonly skipped?: Readonly<Record<string, number>>;
}

/** The deterministic id of an item: the same article for the same question is stored once. */
export function evidenceId(sourceSlug: string, questionId: string, urlOrTitle: string): string {
  return `ev-${createHash('sha256').update(`${sourceSlug}|${questionId}|${urlOrTitle}`).digest('hex').slice(0, 24)}`;
}

/** True when the item may be shown to a forecast made at `asOf`. */
export function publishedBy(item: Pick<EvidenceRow, 'published_at'>, asOf: Date): boolean {
  return item.published_at !== null && !Number.isNaN(item.published_at.getTime()) && item.published_at.getTime() <= asOf.getTime();
}
