/**
 * The front door is the dashboard (issue 16): `GET /` is its HTML shell (header links to the
 * interactive reference /docs, the OpenAPI document and health; every endpoint of the API listed
 * from the OpenAPI document at the foot, so a new route appears there by itself), `GET
 * /dashboard/app.js` and `/dashboard/style.css` its bundle (dashboard/src built by
 * scripts/build-dashboard.ts into dashboard/dist: Observable Plot inside, no CDN), `GET
 * /favicon.svg` and `/favicon.ico` its icon (browsers ask for /favicon.ico on their own: it must not
 * be a 404).
 *
 * Within the helmet CSP of app.ts (default-src 'self'): scripts and styles from this origin only;
 * the one inline <script> is `type="application/json"` data (the plan each route needs), which a
 * browser never executes. The shell is built once per app, on first request; the bundle is gzipped
 * once per build and revalidated by ETag. Content coding is negotiated on Accept-Encoding (q-values
 * honoured: `gzip;q=0` gets the identity bytes) and each coding has its own strong ETag (`"<hash>"`,
 * `"<hash>-gzip"`) beside `Vary: Accept-Encoding`, so no cache can hand gzip bytes to a client that
 * did not ask for them, nor answer one coding's If-None-Match with the other's 304.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { DASHBOARD_DIST } from '../../pipeline/cli/prebuilt.js';
import { ENTITLEMENTS, isRouteId, requiredPlan } from '../auth/entitlements.ts';
import type { EncodedBody } from '../cache/response-cache.ts';
import { ApiError } from '../errors/problem.ts';
import { rawRoute, sendBody, staticRoute, type ApiServices } from '../http/registry.ts';

const ICON_COLOR = '#2563eb';

export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">' +
  `<circle cx="7.5" cy="7.5" r="5.5" fill="none" stroke="${ICON_COLOR}" stroke-width="2.5"/>` +
  `<path d="M10.5 10.5l4 4" stroke="${ICON_COLOR}" stroke-width="2.5" stroke-linecap="round"/></svg>\n`;

/**
 * The same icon as a 16×16 32-bit ICO (one BMP image: BITMAPINFOHEADER, bottom-up BGRA rows, an
 * all-zero AND mask since the alpha channel carries transparency), drawn here so that no binary
 * file has to ship.
 */
export function faviconIco(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  const [r, g, b] = [0x25, 0x63, 0xeb];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const cx = x + 0.5 - 7.5;
      const cy = y + 0.5 - 7.5;
      const d = Math.hypot(cx, cy);
      const ring = d >= 4.3 && d <= 6.8;
      const tail = x >= 10 && y >= 10 && Math.abs(x - y) <= 1;
      if (!ring && !tail) continue;
      const row = size - 1 - y; // BMP rows run bottom-up
      const o = (row * size + x) * 4;
      pixels[o] = b;
      pixels[o + 1] = g;
      pixels[o + 2] = r;
      pixels[o + 3] = 0xff;
    }
  }
  const mask = Buffer.alloc(size * 4); // 16 rows of 32 bits (rows padded to 4 bytes)
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0);
  info.writeInt32LE(size, 4);
  info.writeInt32LE(size * 2, 8); // XOR image + AND mask
  info.writeUInt16LE(1, 12);
  info.writeUInt16LE(32, 14);
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(size, 6);
  header.writeUInt8(size, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, image]);
}

const ICO = faviconIco();

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

interface Listed {
  method: string;
  path: string;
  summary: string;
  access: string;
}

type Operation = { summary?: string; operationId?: string };

/** Every documented endpoint under /api/: method, path, summary and who may call it here. */
function endpoints(services: ApiServices): Listed[] {
  const paths = (services.openapi().paths ?? {}) as Record<string, Record<string, Operation>>;
  const out: Listed[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (method !== 'get' && method !== 'post') continue;
      out.push({ method: method.toUpperCase(), path, summary: op.summary ?? '', access: accessOf(op.operationId ?? '', services) });
    }
  }
  return out;
}

/** Who may call route `id` under this deployment, in a few words. */
function accessOf(id: string, services: ApiServices): string {
  if (!isRouteId(id)) return '';
  const e = ENTITLEMENTS[id] as { kind: string; keyRequired?: boolean; scope?: string };
  const plan = requiredPlan(id, services.publicBeta);
  if (e.kind === 'open') return 'open';
  if (e.keyRequired) return 'any key';
  if (plan === null) return services.publicBeta ? 'public (beta)' : 'public';
  return e.scope ? `${plan} + ${e.scope} scope` : `${plan} plan`;
}

/** Which plan each GET route needs here (null: open), keyed by route id: the dashboard reads it so
 *  that it never calls an endpoint the reader cannot use or that does not exist yet. */
function routeAccess(services: ApiServices): Record<string, { path: string; plan: string | null; keyRequired: boolean }> {
  const paths = (services.openapi().paths ?? {}) as Record<string, Record<string, Operation>>;
  const out: Record<string, { path: string; plan: string | null; keyRequired: boolean }> = {};
  for (const [path, item] of Object.entries(paths)) {
    const id = item.get?.operationId ?? '';
    if (!path.startsWith('/api/') || !isRouteId(id)) continue;
    const e = ENTITLEMENTS[id] as { keyRequired?: boolean; scope?: string };
    out[id] = { path, plan: requiredPlan(id, services.publicBeta), keyRequired: Boolean(e.keyRequired || e.scope) };
  }
  return out;
}

/** JSON inside a non-executed <script type="application/json">: only `<` needs escaping. */
const jsonForHtml = (v: unknown): string => JSON.stringify(v).replace(/</g, '\\u003c');

/**
 * The dashboard's shell (issue 16): header links (pages, then docs, OpenAPI, health), the route
 * access table as JSON data, the bundled script and styles from this origin (dashboard/dist, built
 * by scripts/build-dashboard.ts), and the endpoint list for readers without JavaScript.
 */
function page(services: ApiServices, chunks: string[]): string {
  const rows = endpoints(services)
    .map(({ method, path, summary, access }) => {
      // GET paths without parameters are links; the others are shown as they are.
      const shownPath = method !== 'GET' || path.includes('{')
        ? `<code>${escapeHtml(path)}</code>`
        : `<a href="${escapeHtml(path)}"><code>${escapeHtml(path)}</code></a>`;
      return `      <tr><td>${method}</td><td>${shownPath}</td><td>${escapeHtml(summary)}</td><td>${escapeHtml(access)}</td></tr>`;
    })
    .join('\n');
  const config = jsonForHtml({ publicBeta: services.publicBeta, routes: routeAccess(services) });
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Quorum</title>
  <meta name="description" content="Four AI models, one consensus, scored against reality.">
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="${DASHBOARD_ASSETS.css}">
  <script type="module" src="${DASHBOARD_ASSETS.js}"></script>
${chunks.map((n) => `  <link rel="modulepreload" href="/dashboard/${escapeHtml(n)}">\n`).join('')}  <script type="application/json" id="quorum-routes">${config}</script>
</head>
<body>
  <header class="top">
    <a class="brand" href="#/">Quorum</a>
    <nav class="pages" aria-label="Pages">
      <a href="#/">Overview</a>
      <a href="#/predictions">Predictions</a>
      <a href="#/sources">Sources</a>
      <a href="#/theses">Theses</a>
      <a href="#/factors">Factors</a>
      <a href="#/scenarios">Scenarios</a>
    </nav>
    <nav class="links" aria-label="API">
      <a href="/docs">API reference</a>
      <a href="/api/openapi.json">OpenAPI 3.1 document</a>
      <a href="/healthz">Health</a>
      <a href="/readyz">Readiness</a>
    </nav>
    <div id="key-slot"></div>
  </header>
  <main id="app" aria-live="polite" data-ready="0">
    <h1>Quorum</h1>
    <p class="lead">Four AI models, one consensus, scored against reality.</p>
    <p>Quorum asks four AI models for the probability of real-world events in three information modes
    (blind, informed, augmented), sets their consensus beside the prediction-market price, keeps their
    disagreement visible as an uncertainty signal, and scores everyone with Brier scores once the events
    resolve against named, authoritative sources. The dashboard needs JavaScript; the read-only JSON API
    below does not, and every answer names the data snapshot it comes from.</p>
  </main>
  <footer>
    <details>
      <summary>API endpoints</summary>
      <p>Send a key as <code>X-API-Key: &lt;key&gt;</code> or <code>Authorization: Bearer &lt;key&gt;</code> where one is needed.</p>
      <table>
        <tbody>
${rows}
        </tbody>
      </table>
    </details>
  </footer>
</body>
</html>
`;
}

export const frontDoorRoute = rawRoute({
  id: 'front',
  path: '/',
  summary: 'The front door (HTML)',
  tags: ['operations'],
  hidden: true,
  responses: { 'text/html': { schema: z.string() } },
  // Revalidated on each visit (its ETag: a 304 while it is unchanged), as the dashboard's files
  // are: it names the build's chunks and this server's routes, so a copy kept for minutes after an
  // upgrade preloaded a chunk the new build had removed (QA: a 404 and a console error), and
  // offered the routes of the server before.
  handle: (req, res, { services }) => {
    sendBody(req, res, frontDoorBody(services), { type: 'text/html; charset=utf-8', cacheControl: 'no-cache', gzipFrom: 0 });
  },
});
/** The page of each app (its endpoint list and access labels depend on the app's routes and beta setting). */
const pages = new WeakMap<ApiServices, { key: string; html: EncodedBody }>();

/** The shell's HTML with its ETag, rendered once per app and rebuilt when a new dashboard build
 *  names other chunks (their names are content hashes). The first render builds the OpenAPI document. */
function frontDoorBody(services: ApiServices): EncodedBody {
  const chunks = preloads();
  const key = chunks.join(' ');
  let known = pages.get(services);
  if (known?.key !== key) {
    const body = Buffer.from(page(services, chunks));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    pages.set(services, (known = { key, html: { body, etag } }));
  }
  return known.html;
}

/**
 * Does a first visit's server-side work ahead of it: renders the shell (and with it the OpenAPI
 * document) and reads and compresses the dashboard's files, which otherwise cost the first visitor
 * a few hundred milliseconds. A dashboard not built yet is left alone (its routes say so).
 */
export function warmFrontDoor(services: ApiServices): void {
  frontDoorBody(services);
  for (const file of ['app.js', 'style.css', ...preloads()]) asset(file);
}

/** Where the shell loads the bundle from (isExemptPath in app.ts keeps /dashboard/ outside quotas). */
export const DASHBOARD_ASSETS = { js: '/dashboard/app.js', css: '/dashboard/style.css' } as const;
const DIST = DASHBOARD_DIST;
/** The names a build writes (app.js, style.css, chunk-<hash>.js): nothing else is served. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.(js|css)$/;
const ASSET_TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** A built file: its body, strong validator and gzip coding (made at read: level 9), as sendBody sends them. */
interface Asset extends EncodedBody {
  mtimeMs: number;
}
const assets = new Map<string, Asset>();

const notBuilt = (): ApiError =>
  new ApiError(503, 'not_ready', 'The dashboard is not built: run `npm run build:dashboard` (npm start and npm test build it).');

/** The built file, gzipped once per build (re-read when its mtime changes); null when there is none. */
function asset(file: string): Asset | null {
  const full = path.join(DIST, file);
  let mtimeMs: number;
  try {
    mtimeMs = statSync(full).mtimeMs;
  } catch {
    return null;
  }
  const known = assets.get(file);
  if (known && known.mtimeMs === mtimeMs) return known;
  const body = readFileSync(full);
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  const a = { mtimeMs, body, gzip: gzipSync(body, { level: 9 }), etag: `"${hash}"` };
  assets.set(file, a);
  return a;
}

let manifest: { mtimeMs: number; preload: string[] } | null = null;

/** The chunks app.js imports (dist/manifest.json, written by the build), for modulepreload links; read again only when a build replaced it. */
function preloads(): string[] {
  const file = path.join(DIST, 'manifest.json');
  try {
    const { mtimeMs } = statSync(file);
    if (manifest?.mtimeMs !== mtimeMs) {
      const m = JSON.parse(readFileSync(file, 'utf8')) as { preload?: unknown };
      const preload = Array.isArray(m.preload) ? m.preload.filter((n): n is string => typeof n === 'string' && ASSET_NAME.test(n)) : [];
      manifest = { mtimeMs, preload };
    }
    return manifest.preload;
  } catch {
    return []; // not built yet: app.js answers 503 and says so
  }
}

/** GET /dashboard/{file}: a file of the built dashboard (gzip when accepted, an ETag per coding, revalidated on each load). */
export const dashboardAssetRoute = rawRoute({
  id: 'front',
  path: '/dashboard/{file}',
  summary: "The dashboard's script and styles",
  tags: ['operations'],
  hidden: true,
  params: z.object({ file: z.string() }),
  responses: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
  handle: (req, res) => {
    const file = String(req.params.file ?? '');
    const ext = ASSET_NAME.exec(file)?.[1];
    const a = ext ? asset(file) : null;
    if (!a || !ext) {
      if (file === 'app.js' || file === 'style.css') throw notBuilt();
      throw ApiError.notFound(`No dashboard file ${JSON.stringify(file.slice(0, 80))}.`);
    }
    sendBody(req, res, a, { type: ASSET_TYPES[ext]!, cacheControl: 'no-cache', gzipFrom: 0 });
  },
});

export const faviconSvgRoute = staticRoute({
  id: 'favicon',
  path: '/favicon.svg',
  summary: 'Icon (SVG)',
  type: 'image/svg+xml',
  body: FAVICON_SVG,
  maxAgeSeconds: 86400,
});

export const faviconIcoRoute = staticRoute({
  id: 'favicon',
  path: '/favicon.ico',
  summary: 'Icon (ICO)',
  type: 'image/x-icon',
  body: ICO,
  maxAgeSeconds: 86400,
});
