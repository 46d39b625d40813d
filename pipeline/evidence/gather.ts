/**
 * Gathers the evidence of a run's augmented tasks: every provider for every question, merged
 * round-robin (so one provider cannot crowd out the others), each article once (by id, and by URL
 * across providers, the first provider's item kept), at most `maxPerQuestion` items,
 * filtered again by the as-of rule. A provider failing for a question is counted and logged, never
 * fatal: the question is forecast with what the other providers found (or with none).
 */
import PQueue from 'p-queue';
import type { TaskQuestion } from '../models/prompts.ts';
import { publishedBy, type EvidenceProvider, type EvidenceRow } from './types.ts';

export interface GatherOptions {
  providers: EvidenceProvider[];
  asOf: Date;
  maxPerQuestion: number;
  /** Questions retrieved at once (providers pace their own requests). Default 8. */
  concurrency?: number;
  /** Aborting stops starting new questions; what finished is returned. */
  signal?: AbortSignal;
  /**
   * A question the signal stops mid-way keeps what its providers answered, and the providers it
   * stopped are its errors, of kind `timeout`: for a caller that will not retry it (the probability
   * endpoint's evidence deadline; QA review: a GDELT request still running at the deadline dropped
   * the local files' evidence, and every provider was said to have timed out). Default: nothing of
   * it is kept, so that a resumed run retries it whole.
   */
  keepPartial?: boolean;
  /** A caller waiting for the answer (the probability endpoint): see `RetrieveOptions.interactive`. */
  interactive?: boolean;
  /**
   * Called once per question done (journal, progress). An exception from it (a journal append on a
   * full disk) fails the gathering: no new question starts, and it is thrown once those in flight end.
   */
  onQuestion?: (questionId: string, items: EvidenceRow[], errors: ProviderError[]) => void;
}

export interface ProviderError {
  provider: string;
  question_id: string;
  kind: string;
  message: string;
}

export interface GatherResult {
  byQuestion: Map<string, EvidenceRow[]>;
  errors: ProviderError[];
  /** True when the signal stopped it before every question was done. */
  stopped: boolean;
}

export async function gatherEvidence(questions: TaskQuestion[], opts: GatherOptions): Promise<GatherResult> {
  const byQuestion = new Map<string, EvidenceRow[]>();
  const errors: ProviderError[] = [];
  const queue = new PQueue({ concurrency: opts.concurrency ?? 8 });
  let stopped = false;
  // The first failure of a question's own work (onQuestion: the run's journal append, which fails
  // on a full disk), thrown once the questions started are done. The queue's promises are not
  // awaited, so a task must never reject: QA, an EFBIG journaling evidence was an unhandled
  // rejection that killed the process, `quorum start`'s API server with its scheduled run.
  let failure: { err: unknown } | null = null;
  for (const q of questions) {
    void queue.add(async () => {
      try {
        await gatherQuestion(q);
      } catch (err) {
        failure ??= { err };
        queue.clear(); // no new question: the run fails (its journal kept for --resume)
      }
    });
  }
  await queue.onIdle();
  if (failure) throw (failure as { err: unknown }).err;
  return { byQuestion, errors, stopped };

  /** One question: every provider, merged; `onQuestion` told. */
  async function gatherQuestion(q: TaskQuestion): Promise<void> {
    if (opts.signal?.aborted) {
      stopped = true;
      return;
    }
    const qErrors: ProviderError[] = [];
    const lists = await Promise.all(
      opts.providers.map(async (p) => {
        try {
          const items = await p.retrieve(q, { asOf: opts.asOf, limit: opts.maxPerQuestion, signal: opts.signal, interactive: opts.interactive });
          return items.filter((x) => x.question_id === q.question_id && publishedBy(x, opts.asOf));
        } catch (err) {
          const kind = (err as { kind?: unknown })?.kind;
          qErrors.push({
            provider: p.name,
            question_id: q.question_id,
            kind: opts.keepPartial && opts.signal?.aborted ? 'timeout' : typeof kind === 'string' ? kind : 'other',
            message: (err instanceof Error ? err.message : String(err)).slice(0, 300),
          });
          return [];
        }
      }),
    );
    if (opts.signal?.aborted && qErrors.length > 0) {
      stopped = true; // interrupted mid-way: retried by a resumed run, not stored half-done
      if (!opts.keepPartial) return;
    }
    const merged: EvidenceRow[] = [];
    const ids = new Set<string>();
    for (let i = 0; merged.length < opts.maxPerQuestion && lists.some((l) => i < l.length); i++) {
      for (const l of lists) {
        const x = l[i];
        if (!x || merged.length >= opts.maxPerQuestion) continue;
        // The same article from two providers (a local file and GDELT) has two ids: shown once.
        const url = x.url ? `url:${x.url.trim()}` : null;
        if (ids.has(x.evidence_id) || (url !== null && ids.has(url))) continue;
        ids.add(x.evidence_id);
        if (url !== null) ids.add(url);
        merged.push(x);
      }
    }
    byQuestion.set(q.question_id, merged);
    errors.push(...qErrors);
    opts.onQuestion?.(q.question_id, merged, qErrors);
  }
}
