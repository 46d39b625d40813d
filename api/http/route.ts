/**
 * Registers a read-only route: GET (and HEAD, which Express answers from GET), OPTIONS with an
 * `Allow` header, and a 405 problem for every other method. Trailing slashes are optional because
 * the app's router is not strict.
 */
import type { Express, RequestHandler } from 'express';
import { ApiError } from '../errors/problem.ts';

const ALLOW = ['GET', 'HEAD', 'OPTIONS'] as const;

export function getRoute(app: Express, path: string, handler: RequestHandler): void {
  app
    .route(path)
    .get(handler)
    .options((_req, res) => {
      res.setHeader('Allow', ALLOW.join(', '));
      res.status(204).end();
    })
    .all((req) => {
      throw ApiError.methodNotAllowed(req.method, ALLOW);
    });
}
