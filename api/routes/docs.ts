/**
 * `GET /api/openapi.json`: the OpenAPI 3.1 document generated from the route registry.
 * `GET /docs`: the interactive reference (Swagger UI served from swagger-ui-dist, no CDN); its
 * assets are under /docs/ (express.static, mounted in app.ts). CSP: self only.
 */
import { z } from 'zod';
import { etagOf, type EncodedBody } from '../cache/response-cache.ts';
import { rawRoute, sendJsonBody, staticRoute, type ApiServices } from '../http/registry.ts';

export const openapiRoute = rawRoute({
  id: 'openapi',
  path: '/api/openapi.json',
  summary: 'This OpenAPI 3.1 document',
  tags: ['operations'],
  conditional: true,
  responseHeaders: {
    ETag: 'Strong validator of the document (send it as If-None-Match: a 304 while it is unchanged).',
    'Cache-Control': '`public, max-age=300` (then revalidate with the ETag).',
  },
  responses: { 'application/json': { schema: z
        .object({ openapi: z.string().meta({ description: 'The OpenAPI version of the document (3.1.0).' }) })
        .loose()
        .meta({ description: 'The OpenAPI 3.1 document of this API (info, paths, components, …).' }) } },
  handle: (req, res, { services }) => sendJsonBody(req, res, documentBody(services), 'public, max-age=300'),
});

/** The document serialized once per app, with its ETag (and gzip coding, made on first demand). */
const documents = new WeakMap<ApiServices, EncodedBody>();
function documentBody(services: ApiServices): EncodedBody {
  let entry = documents.get(services);
  if (!entry) {
    const body = Buffer.from(JSON.stringify(services.openapi()), 'utf8');
    entry = { body, etag: etagOf(body) };
    documents.set(services, entry);
  }
  return entry;
}

/** The `route` label (request log, metrics) of the assets below and of /docs/quorum-init.js. */
export const DOCS_ASSETS_ROUTE_ID = 'docs.assets';
/** The swagger-ui-dist files the page below loads (app.ts serves these and no other file of the package). */
export const DOCS_ASSETS: ReadonlySet<string> = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js', '/swagger-ui-standalone-preset.js']);

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Quorum API reference</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/quorum-init.js"></script>
</body>
</html>
`;

export const DOCS_INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

export const docsRoute = staticRoute({
  id: 'docs',
  path: '/docs',
  summary: 'Interactive API reference (HTML)',
  type: 'text/html',
  body: DOCS_HTML,
  maxAgeSeconds: 300,
});
