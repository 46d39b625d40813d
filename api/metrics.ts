/**
 * Prometheus metrics (prom-client), one registry per app: the default process metrics plus
 *   quorum_http_requests_total{route,method,status}
 *   quorum_http_request_duration_seconds{route,method,status}
 * `route` is the registry's route id (`unmatched` for paths no route answered), never the raw path,
 * so label cardinality stays bounded.
 */
import type { Request, Response } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** Records one answered request (called by the front middleware when the response finishes). */
  observe(req: Request, res: Response, seconds: number): void;
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
  const observe = (req: Request, res: Response, seconds: number) => {
    const route = typeof res.locals.routeId === 'string' ? res.locals.routeId : 'unmatched';
    const method = METHODS.has(req.method) ? req.method : 'OTHER';
    const k = `${route} ${method} ${res.statusCode}`;
    let labels = labelCache.get(k);
    if (!labels) {
      labels = { route, method, status: String(res.statusCode) };
      if (labelCache.size < 10_000) labelCache.set(k, labels);
    }
    requests.inc(labels);
    duration.observe(labels, seconds);
  };
  return { registry, observe };
}
