/**
 * A test server of the export routes only (api/export/routes.ts), auth from the X-Test-Plan header,
 * problems as the API writes them: the export tests' server (export, columns, slices, lifecycle).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express, { type ErrorRequestHandler } from 'express';
import { PROBLEM_CONTENT_TYPE, toApiError } from '../../api/errors/problem.ts';
import { silentLogger } from '../../api/logging/logger.ts';
import { SnapshotReader } from '../../api/snapshot/reader.ts';
import { registerExportRoutes, type ExportDeps, type ExportService } from '../../api/export/routes.ts';


export interface TestServer {
  url: string;
  port: number;
  service: ExportService;
  tempDir: string;
  /**
   * Each response as api/http/front.ts sees it when it closes (request log and metrics): finished,
   * or `aborted` (closed before it was complete).
   */
  closes: Array<{ path: string; finished: boolean }>;
  close(): Promise<void>;
}

export async function startExportServer(dataDir: string, deps: Partial<ExportDeps> = {}): Promise<TestServer> {
  const logger = silentLogger();
  const snapshots = await SnapshotReader.open({ dataDir, logger, pollMs: 0 });
  const tempDir = deps.tempDir ?? (await mkdtemp(path.join(tmpdir(), 'quorum-export-test-')));
  const app = express();
  app.set('query parser', 'simple');
  const closes: TestServer['closes'] = [];
  app.use((req, res, next) => {
    // front.ts's test: a response not finished when it closes is logged and counted `aborted`.
    res.once('close', () => closes.push({ path: req.originalUrl, finished: res.writableFinished }));
    const plan = req.header('x-test-plan');
    if (plan) res.locals.auth = { plan, keyId: req.header('x-test-key') ?? `key-${plan}`, scopes: [] };
    next();
  });
  const service = registerExportRoutes(app, snapshots, { logger, ...deps, tempDir });
  app.use((req) => {
    throw Object.assign(new Error('not found'), { status: 404 });
  });
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const problem = toApiError(err);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(problem.headers)) res.setHeader(k, v);
    res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem.toProblem(req.originalUrl.split('?')[0])));
  };
  app.use(onError);
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await service.swept;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    service,
    tempDir,
    closes,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
      await snapshots.close();
      if (!deps.tempDir) await rm(tempDir, { recursive: true, force: true });
    },
  };
}
