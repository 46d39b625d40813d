/**
 * Prometheus metrics (prom-client), one registry per app: the default process metrics plus
 *   quorum_http_requests_total{route,method,status}
 *   quorum_http_request_duration_seconds{route,method,status}
 *     `status` is the HTTP status, or `aborted` for a response the client closed before it was
 *     complete (a cancelled download, every event-stream connection: QA, these were not counted)
 *   quorum_exports_total{outcome}    started, completed, failed, cancelled, stalled, rejected_busy,
 *                                    rejected_key_busy (the export engine's own counts)
 *   quorum_stream_clients            event-stream connections open now
 *   quorum_snapshot_loads_total      snapshots loaded since the server started
 *   quorum_snapshot_age_seconds      now − the served snapshot's as_of (absent before one)
 *   quorum_webhook_attempts_total{result}       delivery attempts since the server started:
 *                                               delivered, retry (to be attempted again), failed
 *   quorum_webhook_deliveries_pending           deliveries queued and not yet finished
 *   quorum_webhook_oldest_pending_seconds       now − when the oldest pending one was queued (0: none);
 *                                               a stuck receiver or queue shows as a growing age
 * `route` is the registry's route id (`unmatched` for paths no route answered; `docs.assets` for the
 * files the /docs page loads; `unparsed` for a
 * request Node's HTTP parser refused before the app saw it: a 400, 408 or 431 problem, counted in
 * the requests total only, as its duration is not known), never the raw path, so label
 * cardinality stays bounded.
 */
import type { Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExportStats } from './export/engine.ts';

/** What the gauges and the export counters read at each scrape (each absent: not reported). */
export interface MetricSources {
  exportStats?: () => Readonly<ExportStats> | null;
  streamClients?: () => number | null;
  /** The served snapshot's as_of (ISO 8601), null before one is loaded. */
  snapshotAsOf?: () => string | null;
  /** The webhook dispatcher's attempts and its queue's backlog (absent: webhooks are off). */
  webhooks?: () => WebhookStats;
}

export interface WebhookStats {
  attempts: Readonly<Record<'delivered' | 'retry' | 'failed', number>>;
  pending: number;
  /** When the oldest pending delivery was queued (ms since the epoch), null when none is. */
  oldestQueuedAt: number | null;
}

export interface Metrics {
  registry: Registry;
  /** Records one request when its response closes (`aborted`: the client closed it before it was complete). */
  observe(req: Request, res: Response, seconds: number, aborted?: boolean): void;
  /** Records one request Node's HTTP parser refused (answered with `status` by api/http/client-error.ts). */
  unparsed(method: string | null, status: number): void;
  /** Reports what `sources` give at every scrape. */
  watch(sources: MetricSources): void;
  /** Counts a snapshot loaded. */
  snapshotLoaded(): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'quorum_http_requests_total',
    help: 'HTTP requests answered, by route id, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'quorum_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by route id, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);
  // label objects are reused per (route, method, status): no allocation on the hot path
  const labelCache = new Map<string, { route: string; method: string; status: string }>();
  const observe = (req: Request, res: Response, seconds: number, aborted = false) => {
    const route = typeof res.locals.routeId === 'string' ? res.locals.routeId : 'unmatched';
    const method = METHODS.has(req.method) ? req.method : 'OTHER';
    const status = aborted ? 'aborted' : String(res.statusCode);
    const k = `${route} ${method} ${status}`;
    let labels = labelCache.get(k);
    if (!labels) {
      labels = { route, method, status };
      if (labelCache.size < 10_000) labelCache.set(k, labels);
    }
    requests.inc(labels);
    duration.observe(labels, seconds);
  };
  const unparsed = (method: string | null, status: number) => {
    requests.inc({ route: 'unparsed', method: method !== null && METHODS.has(method) ? method : 'OTHER', status: String(status) });
  };
  const loads = new Counter({ name: 'quorum_snapshot_loads_total', help: 'Snapshots loaded since the server started.', registers: [registry] });
  return { registry, observe, unparsed, watch: (sources) => watchSources(registry, sources), snapshotLoaded: () => loads.inc() };
}

/** The export engine's outcomes, as quorum_exports_total's `outcome` label reads them. */
const EXPORT_OUTCOMES: readonly [string, (s: Readonly<ExportStats>) => number][] = [
  ['started', (s) => s.started],
  ['completed', (s) => s.completed],
  ['failed', (s) => s.failed],
  ['cancelled', (s) => s.cancelledDuringCopy + s.cancelledDuringStream],
  ['stalled', (s) => s.stalled],
  ['rejected_busy', (s) => s.rejectedBusy],
  ['rejected_key_busy', (s) => s.rejectedKeyBusy],
];

/** Registers the metrics read from `sources` at each scrape (prom-client's `collect`). */
function watchSources(registry: Registry, sources: MetricSources): void {
  const { exportStats, streamClients, snapshotAsOf, webhooks } = sources;
  if (exportStats) {
    new Counter({
      name: 'quorum_exports_total',
      help: 'Exports by outcome (the export engine\'s counts since the server started; a stalled export is also cancelled).',
      labelNames: ['outcome'] as const,
      registers: [registry],
      collect() {
        const stats = exportStats();
        this.reset();
        if (stats) for (const [outcome, read] of EXPORT_OUTCOMES) this.inc({ outcome }, read(stats));
      },
    });
  }
  if (streamClients) {
    new Gauge({
      name: 'quorum_stream_clients',
      help: 'Event-stream (GET /api/stream/) connections open now.',
      registers: [registry],
      collect() {
        this.set(streamClients() ?? 0);
      },
    });
  }
  if (snapshotAsOf) {
    new Gauge({
      name: 'quorum_snapshot_age_seconds',
      help: 'Seconds from the served snapshot\'s as_of to now (absent before a snapshot is loaded).',
      registers: [registry],
      collect() {
        const asOf = snapshotAsOf();
        if (asOf !== null) this.set((Date.now() - Date.parse(asOf)) / 1000);
        // An unlabelled gauge always holds a sample (0 when new or reset): remove it, so that a
        // server with no snapshot has no age rather than the age of a snapshot just published (QA:
        // `quorum_snapshot_age_seconds 0` before any snapshot, which a staleness alert reads as fresh).
        else this.remove();
      },
    });
  }
  if (webhooks) watchWebhooks(registry, webhooks);
}

/** The webhook metrics (see the header), read from the dispatcher at each scrape. */
function watchWebhooks(registry: Registry, read: () => WebhookStats): void {
  new Counter({
    name: 'quorum_webhook_attempts_total',
    help: 'Webhook delivery attempts since the server started, by result: delivered, retry (to be attempted again), failed.',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const { attempts } = read();
      this.reset();
      for (const result of ['delivered', 'retry', 'failed'] as const) this.inc({ result }, attempts[result]);
    },
  });
  new Gauge({
    name: 'quorum_webhook_deliveries_pending',
    help: 'Webhook deliveries queued and not yet finished.',
    registers: [registry],
    collect() {
      this.set(read().pending);
    },
  });
  new Gauge({
    name: 'quorum_webhook_oldest_pending_seconds',
    help: 'Seconds since the oldest pending webhook delivery was queued (0 when none is pending).',
    registers: [registry],
    collect() {
      const { oldestQueuedAt } = read();
      this.set(oldestQueuedAt === null ? 0 : Math.max(0, (Date.now() - oldestQueuedAt) / 1000));
    },
  });
}
