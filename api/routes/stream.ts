/**
 * `GET /api/stream/` (enterprise): the events as Server-Sent Events (issue 15 point 2). See
 * api/events/stream-hub.ts for resume, heartbeats and slow clients.
 */
import type { Request } from 'express';
import { z } from 'zod';
import { EVENT_TYPES } from '../../pipeline/events/event-types.ts';
import { setStreamHeaders, type StreamHub, type StreamFilter } from '../events/stream-hub.ts';
import { requiredPlan } from '../auth/entitlements.ts';
import type { KeyStore } from '../auth/keys.ts';
import { authOf } from '../auth/middleware.ts';
import { planAtLeast, type Plan } from '../auth/plans.ts';
import { ApiError } from '../errors/problem.ts';
import { rawRoute } from '../http/registry.ts';
import { queryQuestionId } from './prediction-params.ts';
import { parseEnum, parseInteger, queryCategory, queryString } from '../http/params.ts';
import { categoryParam } from '../openapi/common.ts';

const MAX_SEQ = 999_999_999_999_999;

/** The stream hub, set on `app.locals.eventStream` by createApp (absent: events disabled). */
export function streamHubOf(req: Request): StreamHub | undefined {
  return (req.app.locals as { eventStream?: StreamHub }).eventStream;
}

/**
 * Whether the key that opened a stream may still have it: not revoked, not gone from the key
 * file, still on `plan` (the key file is re-read when it changes: KeyStore). A stream opened
 * without a key (a plan that needs none) is always allowed.
 */
export function keyStillAllowed(keys: KeyStore, keyId: string | null, plan: Plan | null): () => boolean {
  if (keyId === null) return () => true;
  return () => {
    const rec = keys.byId(keyId);
    return rec !== null && rec.revoked_at === null && (plan === null || planAtLeast(rec.plan, plan));
  };
}

/** `types`: a comma-separated list of event types. */
function parseTypes(req: Request): Set<string> | null {
  const raw = queryString(req, 'types', 512);
  if (raw === undefined) return null;
  const list = raw.split(',').map((t) => t.trim()).filter(Boolean);
  if (list.length === 0) return null;
  return new Set(list.map((t) => parseEnum(t, 'types', EVENT_TYPES)));
}

export interface ResumePoint {
  /** Resume after this event seq. */
  seq: number;
  /** Where it came from (named in a problem about it). */
  parameter: 'Last-Event-ID' | 'since';
}

/**
 * The resume point: the `Last-Event-ID` header (an automatic reconnect), else `since`; null: live
 * only. `since` is checked even when the header wins: a malformed one is a 400 whatever the headers.
 */
export function resumePoint(req: Request): ResumePoint | null {
  const sinceText = queryString(req, 'since', 32);
  const since = sinceText === undefined ? undefined : parseInteger(sinceText, 'since', { min: 0, max: MAX_SEQ });
  const header = req.headers['last-event-id'];
  if (typeof header === 'string' && header.trim() !== '') {
    return { seq: parseInteger(header.trim(), 'Last-Event-ID', { min: 0, max: MAX_SEQ }, 'Header'), parameter: 'Last-Event-ID' };
  }
  return since === undefined ? null : { seq: since, parameter: 'since' };
}

/**
 * A resume point beyond the newest event (e.g. an id from another deployment, or from before the
 * warehouse was reset) is a 400: live events are only ever sent when they come after the resume
 * point, so such a stream would stay silent until the sequence caught up. The newest seq is read
 * now (after catching up with the warehouse); events appended later come after it and are sent.
 */
async function checkResumePoint(hub: StreamHub, resume: ResumePoint): Promise<void> {
  const newest = await hub.newestSeq(resume.seq);
  if (resume.seq <= newest) return;
  const how = resume.parameter === 'since' ? `?since=${newest}` : `the header Last-Event-ID: ${newest}`;
  const given = resume.parameter === 'since' ? `Query parameter 'since'` : `Header 'Last-Event-ID'`;
  throw ApiError.invalidParameter(
    resume.parameter,
    `${given} is ${resume.seq}, after the newest event (${newest}): no event would ever be sent. ` +
      `Reconnect with ${how} (or without a resume point) to receive the events from now on.`,
    { min: 0, max: newest },
  );
}

export const streamRoute = rawRoute({
  id: 'stream',
  path: '/api/stream/',
  summary: 'Live events (Server-Sent Events)',
  description:
    'A `text/event-stream` of the events derived from each published snapshot: consensus.updated, edge.opened, ' +
    'edge.closed, question.resolved, question.annulled, score.posted, run.completed. Each frame has `id` (the ' +
    'event sequence number), `event` (the type) and `data` (JSON `{id, seq, type, timestamp, data}`). Resume ' +
    'with the `Last-Event-ID` header (what EventSource sends on reconnect) or `?since=<seq>`: the retained ' +
    'events after it are sent first (7 days by default), with no gap and no repeat. A resume point greater than ' +
    'the newest event\'s sequence number is a 400 `invalid_parameter` problem naming the newest one: reconnect ' +
    'with that (or without a resume point). A comment line every 15 s ' +
    'keeps the connection alive. A client that does not keep up gets a final `stream.overflow` event naming ' +
    'the id to resume from, and is disconnected.',
  tags: ['events'],
  query: z.object({
    types: z.string().optional().meta({ description: `Comma-separated event types: ${EVENT_TYPES.join(', ')}.` }),
    category: categoryParam.optional().meta({ description: 'Only events of questions in this category (case-insensitive).' }),
    question_id: z.string().optional().meta({ description: 'Only events of this question.' }),
    since: z.int().min(0).max(MAX_SEQ).optional().meta({ description: 'Resume after this event sequence number (Last-Event-ID wins).' }),
  }),
  headers: z.object({
    'Last-Event-ID': z.string().optional().meta({ description: 'Resume after this event sequence number (what EventSource sends on reconnect); wins over `since`.' }),
  }),
  errors: [400, 503],
  responseHeaders: {
    'Cache-Control': '`private, no-cache, no-transform` (a proxy must neither keep nor transform the stream).',
    'X-Accel-Buffering': '`no` (a proxy in front must pass each frame on at once).',
  },
  responses: {
    'text/event-stream': {
      schema: {
        type: 'string',
        description:
          'SSE frames. An event type\'s `data` is a `StreamEvent` (components.schemas; its `data` per type as in this ' +
          "document's `webhooks`); `stream.overflow` and `stream.gap` carry a `StreamOverflow` and a `StreamGap`.",
      },
    },
  },
  handle: async (req, res, { services }) => {
    const filter: StreamFilter = {
      types: parseTypes(req),
      category: queryCategory(req) ?? null,
      questionId: queryQuestionId(req),
    };
    const resume = resumePoint(req);
    const hub = streamHubOf(req);
    if (!hub) throw ApiError.notReady('The event stream is not enabled on this server.');
    if (resume) await checkResumePoint(hub, resume);
    if (hub.full) throw ApiError.rateLimited(5, 'Too many open streams on this server; retry shortly.');
    const keyId = authOf(res).keyId;
    if (hub.fullFor(keyId)) {
      throw ApiError.rateLimited(5, `This key has ${hub.maxPerKey} streams open, as many as a key may (QUORUM_STREAM_MAX_PER_KEY): close one, or retry once one has ended.`, {
        policy: 'streams_per_key',
        limit: hub.maxPerKey,
      });
    }
    if (req.method === 'HEAD') {
      setStreamHeaders(res);
      res.end();
      return;
    }
    await hub.serve(req, res, filter, resume?.seq ?? null, keyStillAllowed(services.keys, keyId, requiredPlan('stream', services.publicBeta)), keyId);
  },
});
