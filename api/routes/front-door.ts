/**
 * The front door: `GET /` is a small HTML page saying what Quorum is, linking the interactive
 * reference (/docs), the OpenAPI document, health and every endpoint of the API (listed from the
 * OpenAPI document, so a new route appears here by itself); `GET /favicon.svg` and
 * `GET /favicon.ico` are its icon (browsers ask for /favicon.ico on their own: it must not be a 404).
 *
 * Self-contained for the helmet CSP of app.ts (default-src 'self'): no external asset, no script
 * (inline or not), styles inline (style-src allows them), the icon from this origin. The page is
 * built once, on first request, and cached by clients for five minutes.
 */
import { z } from 'zod';
import { ENTITLEMENTS, isRouteId, requiredPlan } from '../auth/entitlements.ts';
import { rawRoute, staticRoute, type ApiServices } from '../http/registry.ts';

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

function page(services: ApiServices): string {
  const rows = endpoints(services)
    .map(({ method, path, summary, access }) => {
      // GET paths without parameters are links; the others are shown as they are.
      const shownPath = method !== 'GET' || path.includes('{')
        ? `<code>${escapeHtml(path)}</code>`
        : `<a href="${escapeHtml(path)}"><code>${escapeHtml(path)}</code></a>`;
      return `      <tr><td>${method}</td><td>${shownPath}</td><td>${escapeHtml(summary)}</td><td>${escapeHtml(access)}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Quorum</title>
  <link rel="icon" href="/favicon.svg" type="image/svg+xml">
  <style>
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1f2937; }
    h1 { margin-bottom: 0; } .lead { color: #4b5563; margin-top: .25rem; }
    a { color: ${ICON_COLOR}; } code { font-size: .9em; }
    table { border-collapse: collapse; width: 100%; } td { padding: .3rem .5rem; border-top: 1px solid #e5e7eb; vertical-align: top; }
    nav a { margin-right: 1rem; }
  </style>
</head>
<body>
  <h1>Quorum</h1>
  <p class="lead">Four AI models, one consensus, scored against reality.</p>
  <p>Quorum asks four AI models for the probability of real-world events in three information modes
  (blind, informed, augmented), sets their consensus beside the prediction-market price, keeps their
  disagreement visible as an uncertainty signal, and scores everyone with Brier scores once the events
  resolve against named, authoritative sources. This is its read-only JSON API; every answer names the
  data snapshot it comes from.</p>
  <nav>
    <a href="/docs">API reference</a>
    <a href="/api/openapi.json">OpenAPI 3.1 document</a>
    <a href="/healthz">Health</a>
    <a href="/readyz">Readiness</a>
  </nav>
  <h2>Endpoints</h2>
  <p>Send a key as <code>X-API-Key: &lt;key&gt;</code> or <code>Authorization: Bearer &lt;key&gt;</code> where one is needed.</p>
  <table>
    <tbody>
${rows}
    </tbody>
  </table>
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
  handle: (_req, res, { services }) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    let html = pages.get(services);
    if (html === undefined) pages.set(services, (html = page(services)));
    res.status(200).type('html').send(html);
  },
});
/** The page of each app (its endpoint list and access labels depend on the app's routes and beta setting). */
const pages = new WeakMap<ApiServices, string>();

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
