/**
 * Local evidence files: a directory of JSON Lines files (`QUORUM_EVIDENCE_DIR`, default
 * `data/evidence/`), and the background texts of ForecastBench extracts (the bundled sample's
 * `questions_market.jsonl`).
 *
 * Evidence file format, one JSON object per line (blank lines and `#` lines are skipped):
 *   {"question_id": "metaculus:1554", "title": "...", "url": "https://...",
 *    "published_at": "2025-10-10T00:00:00Z", "snippet": "...", "source_slug": "bls"}
 * question_id and published_at are required (an undated item is never used); published_at is read
 * with the pipeline's instant grammar (pipeline/time/instant.ts: `YYYY-MM-DD` or an ISO-8601
 * date-time, no offset = UTC), never `new Date()`, whose reading of a date-time without an offset
 * depends on the machine's time zone (an item published at 12:30 UTC passed for 03:30 UTC under
 * TZ=Asia/Tokyo, shown to forecasts made hours before it) and which takes "1" for 2001 and rolls
 * 2026-02-30 over into March; such a line is malformed. title, url and snippet are optional; source_slug defaults to "local". A bad line is skipped and counted, never
 * fatal: evidence is an input a run can do without. A line's id covers all it shows
 * ({@link lineEvidenceId}): a line edited later is a new item, stored beside the one earlier runs cited.
 *
 * ForecastBench backgrounds: each question's non-empty `background` becomes one item, titled
 * "Question background (<venue>)", published at the freeze time of the earliest question set that
 * carried it (the text was public by then), with the venue as source_slug.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { clip, type TaskQuestion } from '../models/prompts.ts';
import { parseInstant } from '../time/instant.ts';
import { evidenceId, publishedBy, type EvidenceProvider, type EvidenceRow, type RetrieveOptions } from './types.ts';

const lineSchema = z.object({
  question_id: z.string().min(1),
  title: z.string().nullish(),
  url: z.string().nullish(),
  published_at: z.string().min(1),
  snippet: z.string().nullish(),
  source_slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/).nullish(),
  // No evidence_id: a line's id is always that of what it shows (lineEvidenceId). One given in the
  // line was used as is: the same id on two questions' lines was one stored row, and an edited line
  // keeping it was stored as the old text. A line carrying one is read, the field ignored.
});

const forecastBenchSchema = z.object({
  id: z.string().min(1),
  source: z.string().min(1),
  question: z.string(),
  background: z.string().nullish(),
  url: z.string().nullish(),
  freeze_datetime: z.string().min(1),
});

/**
 * The id of an evidence line: its source, question and everything shown of it (title, address,
 * publication time, snippet as cut). A line edited between runs (a corrected snippet or date) is a
 * new item: the raw `evidence` table is keyed by id and keeps the first row of an id, so with an id
 * of the address alone the edited line was stored as the old one, and the forecasts that saw the
 * edit cited the old text (in "evidence used" and the exports). An unchanged line keeps its id.
 */
function lineEvidenceId(item: Omit<Stored, 'evidence_id'>): string {
  const content = JSON.stringify([item.url, item.title, item.published_at!.toISOString(), item.snippet]);
  return evidenceId(item.source_slug, item.question_id, content);
}

/** A file's text without a leading byte order mark (an editor's, which JSON.parse refuses on the first line). */
function readText(file: string): string {
  return readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
}

export interface LocalEvidenceOptions {
  /** Directory of `*.jsonl` evidence files (missing: none). */
  dir?: string;
  /** ForecastBench extract directories whose `questions_market.jsonl` backgrounds are evidence. */
  forecastBenchDirs?: string[];
  /** Snippets are cut to this many characters. Default 2,000. */
  maxSnippetChars?: number;
}

type Stored = Omit<EvidenceRow, 'retrieved_at'>;

export interface LocalEvidenceProvider extends EvidenceProvider {
  /** Lines skipped as malformed, per file. */
  readonly skipped: Record<string, number>;
  /** Items loaded. */
  size(): number;
}

export function createLocalEvidenceProvider(opts: LocalEvidenceOptions): LocalEvidenceProvider {
  const maxSnippet = opts.maxSnippetChars ?? 2000;
  const skipped: Record<string, number> = {};
  let index: Map<string, Stored[]> | null = null;

  const add = (map: Map<string, Stored[]>, item: Stored) => {
    const list = map.get(item.question_id) ?? [];
    if (!list.some((x) => x.evidence_id === item.evidence_id)) list.push(item);
    map.set(item.question_id, list);
  };
  const cut = (s: string | null | undefined) => {
    const t = (s ?? '').trim();
    if (t === '') return null;
    return clip(t, maxSnippet);
  };
  /** The pipeline's one instant grammar (no offset = UTC), not `new Date()`: see the header. */
  const date = (s: string): Date | null => parseInstant(s);

  const load = (): Map<string, Stored[]> => {
    const map = new Map<string, Stored[]>();
    if (opts.dir && existsSync(opts.dir)) {
      for (const name of readdirSync(opts.dir).filter((f) => f.endsWith('.jsonl')).sort()) {
        const file = join(opts.dir, name);
        for (const line of readText(file).split('\n')) {
          if (!line.trim() || line.trimStart().startsWith('#')) continue;
          let parsed: z.infer<typeof lineSchema> | null = null;
          try {
            const r = lineSchema.safeParse(JSON.parse(line));
            if (r.success) parsed = r.data;
          } catch {
            // counted below
          }
          const published = parsed ? date(parsed.published_at) : null;
          if (!parsed || !published) {
            skipped[file] = (skipped[file] ?? 0) + 1;
            continue;
          }
          const slug = parsed.source_slug ?? 'local';
          const item = {
            question_id: parsed.question_id,
            title: parsed.title ?? null,
            url: parsed.url ?? null,
            published_at: published,
            snippet: cut(parsed.snippet),
            source_slug: slug,
          };
          add(map, { evidence_id: lineEvidenceId(item), ...item });
        }
      }
    }
    for (const dir of opts.forecastBenchDirs ?? []) {
      const file = join(dir, 'questions_market.jsonl');
      if (!existsSync(file)) continue;
      const earliest = new Map<string, { rec: z.infer<typeof forecastBenchSchema>; at: Date }>();
      for (const line of readText(file).split('\n')) {
        if (!line.trim()) continue;
        let rec: z.infer<typeof forecastBenchSchema> | null = null;
        try {
          const r = forecastBenchSchema.safeParse(JSON.parse(line));
          if (r.success) rec = r.data;
        } catch {
          // counted below
        }
        const at = rec ? date(rec.freeze_datetime) : null;
        if (!rec || !at) {
          skipped[file] = (skipped[file] ?? 0) + 1;
          continue;
        }
        if (!(rec.background ?? '').trim()) continue;
        const qid = `${rec.source}:${rec.id}`;
        const prev = earliest.get(qid);
        if (!prev || at < prev.at) earliest.set(qid, { rec, at });
      }
      for (const [qid, { rec, at }] of earliest) {
        add(map, {
          evidence_id: evidenceId(rec.source, qid, `background|${rec.url ?? rec.question}`),
          question_id: qid,
          title: `Question background (${rec.source})`,
          url: rec.url ?? null,
          published_at: at,
          snippet: cut(rec.background),
          source_slug: rec.source,
        });
      }
    }
    return map;
  };

  return {
    name: 'local',
    skipped,
    size: () => [...(index ??= load()).values()].reduce((n, l) => n + l.length, 0),
    async retrieve(question: TaskQuestion, o: RetrieveOptions): Promise<EvidenceRow[]> {
      index ??= load();
      const now = new Date();
      return (index.get(question.question_id) ?? [])
        .filter((x) => publishedBy(x, o.asOf))
        .sort((a, b) => b.published_at!.getTime() - a.published_at!.getTime())
        .slice(0, o.limit)
        .map((x) => ({ ...x, retrieved_at: now }));
    },
  };
}
