/**
 * The API reference defines every field a user reads: every property of every JSON 200 body in the
 * OpenAPI document (nested ones included) has a description, on the property or on the schema it
 * refers to: the export's too (its JSON body is an array of the exported table's row schema,
 * api/export/columns.ts).
 * The shared format note of a time (`isoTime`'s "ISO 8601 UTC time.") says how a time is written,
 * not which time it is: a field with only that note is not described.
 *
 * The document is built in process from the route registry, as GET /api/openapi.json serves it
 * (the entitlement setting only changes the access notes of the operations, not the schemas).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ENTITLEMENTS, requiredPlan, type Entitlement } from '../../api/auth/entitlements.ts';
import { KEY_PLANS, PLAN_RANK } from '../../api/auth/plans.ts';
import { openApiDocument } from '../../api/http/registry.ts';
import { isoTime } from '../../api/openapi/common.ts';
import { EXPORT_COLUMNS, exportColumns } from '../../api/export/columns.ts';
import { EXPORT_TABLES } from '../../api/export/tables.ts';
import { exportRouteDoc } from '../../api/routes/export-doc.ts';
import { ROUTES } from '../../api/routes/index.ts';
import { EVENT_TYPES } from '../../pipeline/events/emit.ts';
import { ERROR_KINDS } from '../../pipeline/models/runner.ts';

type Schema = Record<string, any>;

/** Descriptions that are format notes, not definitions. */
const FORMAT_NOTES: ReadonlySet<string> = new Set([String(z.globalRegistry.get(isoTime)?.description)]);
const defines = (d: unknown): boolean => typeof d === 'string' && d.trim() !== '' && !FORMAT_NOTES.has(d);

interface Walk {
  /** `<METHOD> <path>: .field.nested[].leaf` of every undescribed property. */
  undescribed: string[];
  /** Properties checked, described or not. */
  checked: number;
  /** Operations whose 200 body was walked. */
  operations: string[];
}

/** Walks the 200 application/json body of every operation of `doc` except those under `skip`. */
function walkDocument(doc: Schema, skip: (path: string) => boolean): Walk {
  const schemas: Record<string, Schema> = doc.components?.schemas ?? {};
  const resolve = (s: Schema | undefined): Schema | undefined => {
    let r = s;
    for (let i = 0; r?.$ref && i < 10; i++) r = schemas[String(r.$ref).split('/').pop()!];
    return r;
  };
  // The schemas a property refers to: its $ref, and for a nullable reference the $ref among anyOf/oneOf.
  const referred = (v: Schema): Schema[] =>
    [v, ...(v.anyOf ?? []), ...(v.oneOf ?? [])].filter((x: Schema) => x?.$ref).map((x: Schema) => resolve(x)!).filter(Boolean);
  const out: Walk = { undescribed: [], checked: 0, operations: [] };

  const walk = (s: Schema | undefined, at: string, seen: ReadonlySet<Schema>): void => {
    const r = resolve(s);
    if (!r || seen.has(r)) return; // a recursive schema is walked once per branch
    const inner = new Set(seen).add(r);
    for (const alt of [...(r.anyOf ?? []), ...(r.oneOf ?? []), ...(r.allOf ?? [])]) walk(alt, at, inner);
    if (r.items) walk(r.items, `${at}[]`, inner);
    if (r.additionalProperties && typeof r.additionalProperties === 'object') walk(r.additionalProperties, `${at}{}`, inner);
    for (const [k, v] of Object.entries<Schema>(r.properties ?? {})) {
      out.checked++;
      const described = defines(v.description) || referred(v).some((x) => defines(x.description));
      if (!described) out.undescribed.push(`${at}.${k}`);
      walk(v, `${at}.${k}`, inner);
    }
  };

  for (const [path, item] of Object.entries<Schema>(doc.paths ?? {})) {
    if (skip(path)) continue;
    for (const [method, op] of Object.entries<Schema>(item)) {
      const body = op?.responses?.['200']?.content?.['application/json']?.schema;
      if (!body) continue;
      const name = `${method.toUpperCase()} ${path}`;
      out.operations.push(name);
      walk(body, `${name}: `, new Set());
    }
  }
  // What a webhook receiver and a stream reader parse: the events' payloads.
  for (const [type, item] of Object.entries<Schema>(doc.webhooks ?? {})) {
    const body = item.post?.requestBody?.content?.['application/json']?.schema;
    out.operations.push(`WEBHOOK ${type}`);
    walk(body, `WEBHOOK ${type}: `, new Set());
  }
  for (const name of ['StreamEvent', 'StreamOverflow', 'StreamGap']) {
    if (!schemas[name]) continue;
    out.operations.push(`SCHEMA ${name}`);
    walk(schemas[name], `SCHEMA ${name}: `, new Set());
  }
  return out;
}

describe('OpenAPI field descriptions', () => {
  const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;
  const result = walkDocument(doc, () => false);

  it('walks the JSON 200 bodies of every route, the export\'s included', () => {
    // The data routes users read most, and the operational ones, are all in the walk.
    for (const op of [
      'GET /api/predictions/accuracy',
      'GET /api/predictions/resolved',
      'GET /api/predictions/edges/',
      'GET /api/predictions/{market_id}',
      'GET /api/events/accuracy/',
      'GET /api/events/service_stats/',
      'GET /api/track-records/',
      'GET /api/claims/',
      'GET /api/clusters/',
      'GET /api/scenarios/',
      'GET /api/factors/health/',
      'POST /api/probability/',
      'GET /api/usage/',
      'GET /api/webhooks/',
      'GET /healthz',
      'GET /readyz',
      'GET /api/openapi.json',
      `GET ${exportRouteDoc.path}`,
      ...EVENT_TYPES.map((t) => `WEBHOOK ${t}`),
      'SCHEMA StreamEvent',
      'SCHEMA StreamOverflow',
      'SCHEMA StreamGap',
    ]) {
      expect(result.operations).toContain(op);
    }
    expect(result.checked).toBeGreaterThan(1000);
  });

  it('describes every field of every JSON 200 body (on the field or on the schema it refers to)', () => {
    expect(result.undescribed).toEqual([]);
  });

  it('the walk reports an undescribed field, nested ones included', () => {
    const probe = {
      openapi: '3.1.0',
      components: {
        schemas: {
          Described: { type: 'object', description: 'A shared shape.', properties: { a: { type: 'string', description: 'A.' } } },
          Bare: { type: 'object', properties: { b: { type: 'string' } } },
        },
      },
      paths: {
        '/probe': {
          get: {
            responses: {
              200: {
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: {
                        shared: { $ref: '#/components/schemas/Described' },
                        maybe: { anyOf: [{ $ref: '#/components/schemas/Described' }, { type: 'null' }] },
                        list: { type: 'array', description: 'L.', items: { $ref: '#/components/schemas/Bare' } },
                        map: { type: 'object', description: 'M.', additionalProperties: { $ref: '#/components/schemas/Bare' } },
                        plain: { type: 'number' },
                        at: { type: 'string', description: 'ISO 8601 UTC time.' },
                        when: { type: 'string', description: 'When it happened.' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    };
    expect(walkDocument(probe, () => false).undescribed).toEqual([
      'GET /probe: .list[].b',
      'GET /probe: .map{}.b',
      'GET /probe: .plain',
      'GET /probe: .at',
    ]);
  });
});

describe('the OpenAPI document lists what the routes answer (QA: a conformance check of ~700 real responses)', () => {
  const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;

  it('every route with a path parameter documents the 400 of a malformed one (`%ZZ`)', () => {
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
      if (!path.includes('{')) continue;
      for (const [method, op] of Object.entries(ops)) if (!op.responses?.['400']) missing.push(`${method.toUpperCase()} ${path}`);
    }
    expect(missing).toEqual([]);
  });

  it('a 403 plan_required is documented where a key can get one, and only there (QA: GET /api/usage/, any key, documented a 403 no key gets)', () => {
    for (const beta of [true, false]) {
      const d = openApiDocument(ROUTES, { publicBeta: beta }) as Schema;
      for (const route of ROUTES) {
        if (route.mountedElsewhere) continue; // the export: its tables' plans (api/export/tables.ts)
        const e: Entitlement = ENTITLEMENTS[route.id];
        const op = d.paths[route.path]?.[route.method ?? 'get'];
        const need = requiredPlan(route.id, beta);
        const refusesSomeKey = e.kind === 'plan' && (e.scope !== undefined || (need !== null && KEY_PLANS.some((p) => PLAN_RANK[p] < PLAN_RANK[need])));
        const refusesAnonymousWith403 = need !== null && e.kind === 'plan' && !e.keyRequired && !e.scope;
        expect(op?.responses?.['403'] !== undefined, `${route.id} (beta ${beta})`).toBe(refusesSomeKey || refusesAnonymousWith403);
      }
    }
  });

  it('every time field (`*_at`, `as_of`, `at`) that is a string declares format date-time, so clients parse it as one', () => {
    const plain: string[] = [];
    let times = 0;
    const walk = (o: unknown, at: string): void => {
      if (!o || typeof o !== 'object') return;
      for (const [k, v] of Object.entries(o as Schema)) {
        if (at.endsWith('.properties') && /(^|_)at$|^as_of$/.test(k) && v && typeof v === 'object') {
          // the field itself, or the string alternative of a nullable one (anyOf [string, null])
          const strings = [v as Schema, ...((v as Schema).anyOf ?? []), ...((v as Schema).oneOf ?? [])].filter((x: Schema) =>
            ([] as unknown[]).concat(x?.type ?? []).includes('string'),
          );
          if (strings.length > 0) {
            times++;
            if (!strings.every((x: Schema) => x.format === 'date-time' || (v as Schema).format === 'date-time')) plain.push(`${at}.${k}`);
          }
        }
        walk(v, `${at}.${k}`);
      }
    };
    walk(doc, '');
    expect(times).toBeGreaterThan(80);
    expect(plain).toEqual([]);
  });

  it('an event sequence number (`since` of the stream and of a webhook replay) is an integer, as the API parses it (QA: a generated client refused a number)', () => {
    const param = (path: string, method: string) =>
      ((doc.paths[path]?.[method]?.parameters ?? []) as Schema[]).find((p) => p.name === 'since' && p.in === 'query')?.schema;
    for (const [path, method] of [['/api/stream/', 'get'], ['/api/webhooks/{id}/replay', 'post']] as const) {
      expect(param(path, method), `${method} ${path}`).toMatchObject({ type: 'integer', minimum: 0, maximum: 999_999_999_999_999 });
    }
  });

  it('the Problem schema has the fields problems carry beyond RFC 9457 (`closest` of an unknown source slug)', () => {
    const problem = doc.components.schemas.Problem as Schema;
    for (const field of ['parameter', 'allowed', 'plan', 'scope', 'retry_after', 'policy', 'limit', 'limit_bytes', 'closest']) {
      expect(problem.properties[field], field).toBeDefined();
    }
    // and says what they hold for each problem that carries them (QA review: `limit` was "requests
    // per window" of a rate_limited only, on the 409 subscription_limit and the streams_per_key 429 too)
    expect(problem.properties.policy.description).toMatch(/streams_per_key/);
    expect(problem.properties.limit.description).toMatch(/subscription_limit/);
    expect(problem.properties.limit.description).toMatch(/streams/);
  });
});

describe('the export route documents every table\'s time filters (QA: claims and track_records were missing)', () => {
  it('each filter names every table that takes it with the column it compares; since names each table\'s alias; the file name is as sent', () => {
    const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;
    const op = doc.paths[exportRouteDoc.path].get;
    const param = (name: string) => String(op.parameters.find((p: Schema) => p.name === name)?.description);
    expect(param('created_since')).toContain('forecasts (created_at), claims (made_at)');
    expect(param('resolved_since')).toContain('claims (resolved_at)');
    expect(param('updated_since')).toContain("track_records (last_claim_at, or a claim's resolved_at)");
    expect(param('since')).toContain('created_since (claims)');
    expect(param('since')).toContain('updated_since (track_records)');
    // every parameter is described; category says what it filters in each table (QA: it had no
    // description: track_records keeps the sources with a claim in the category, not their claims in it)
    expect(op.parameters.filter((p: Schema) => !(p.description ?? p.schema?.description)).map((p: Schema) => p.name)).toEqual([]);
    expect(param('category')).toContain('track_records (sources with a claim in it');
    expect(param('category')).toContain("claims (the claim's category)");
    // every table takes category (each sql/api/export-*.sql binds it): each is named with what it
    // keeps (outside test: scenario_records, which keeps the scenarios with a component in it, was not)
    for (const table of EXPORT_TABLES) expect(param('category'), table).toContain(table);
    expect(param('category')).toContain('scenario_records (records with a component in it');
    expect(op.responses['200'].headers['Content-Disposition'].schema.description).toContain('quorum-<table>-<snapshot id>.<ext>');
    expect(op.responses['200'].headers['X-Snapshot']).toBeDefined();
  });
});

describe('the export route documents the plan each table needs (QA: it said "Access: the pro plan or higher" and nothing of forecasts, enterprise, or claims, api: a pro key got 403s the document did not announce)', () => {
  it('the table parameter and the description name each table\'s least plan, as api/export/tables.ts enforces it', () => {
    const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;
    const op = doc.paths[exportRouteDoc.path].get;
    const table = String(op.parameters.find((p: Schema) => p.name === 'table')?.description);
    expect(table).toContain('predictions, resolved, scores, track_records, scenario_records: pro');
    expect(table).toContain('claims: api');
    expect(table).toContain('forecasts: enterprise');
    expect(op.description).toContain('claims: api');
    expect(op.description).toContain('forecasts: enterprise');
  });
});

describe('the export route documents every table\'s columns (api/export/columns.ts)', () => {
  const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;
  const content = doc.paths[exportRouteDoc.path].get.responses['200'].content;

  it('the JSON body is an array of one of the tables\' row schemas, whose properties are the columns in order', () => {
    const refs = (content['application/json'].schema.anyOf as Schema[]).map((a) => String(a.items.$ref).split('/').pop()!);
    expect(refs).toEqual(EXPORT_TABLES.map((t) => String(z.globalRegistry.get(EXPORT_COLUMNS[t])?.id)));
    for (const [i, table] of EXPORT_TABLES.entries()) {
      const row = doc.components.schemas[refs[i]!] as Schema;
      expect(Object.keys(row.properties), table).toEqual(exportColumns(table).map((c) => c.name));
    }
  });

  it('the CSV and Parquet bodies list each table\'s columns in order, with their type; JSON lines name the row schemas', () => {
    const csv = String(content['text/csv'].schema.description);
    for (const table of EXPORT_TABLES) {
      const list = csv.slice(csv.indexOf(`${table}: `));
      let at = 0;
      for (const c of exportColumns(table)) {
        const i = list.indexOf(`${c.name} (${c.type}`, at);
        expect(i, `${table}.${c.name} after position ${at}`).toBeGreaterThanOrEqual(at);
        at = i;
      }
    }
    expect(content['application/vnd.apache.parquet'].schema.description).toContain('TIMESTAMP WITH TIME ZONE');
    expect(content['application/x-ndjson'].schema.description).toContain('Export<Table>Row');
  });
});

describe('error kinds', () => {
  it("every error_kind the document describes lists the runner's error kinds (QA review: the Problem's models_unavailable list lacked quota_exhausted and refused)", () => {
    const doc = openApiDocument(ROUTES, { publicBeta: false }) as Schema;
    const found: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk);
      if (!v || typeof v !== 'object') return;
      for (const [k, x] of Object.entries(v as Schema)) {
        if (k === 'error_kind' && x && typeof x === 'object' && typeof (x as Schema).description === 'string') found.push((x as Schema).description);
        walk(x);
      }
    };
    walk(doc);
    expect(found.length).toBeGreaterThanOrEqual(2); // the probability answer's failed models, and the Problem's
    for (const d of found) for (const kind of ERROR_KINDS) expect(d, kind).toMatch(new RegExp(`\\b${kind}\\b`));
  });
});
