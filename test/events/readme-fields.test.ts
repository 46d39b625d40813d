/**
 * The README's events table (section "Events: the live stream and webhooks") names the `data`
 * fields of each event type: a subscriber reads it before the OpenAPI document. Every field it
 * names must be a field of that type's payload schema (api/events/payloads.ts, which the event
 * tests hold every derived event to): a field the README promises and the payload never carries
 * (outside check: `direction` listed for edge.closed, whose payload has none) sends subscribers
 * after a key that is never there.
 *
 * A data cell is read as a comma-separated list of `field` or `field (…)` items; in the
 * parentheses, a list of lower-case names is the field's own fields (`source (slug, name, …)`),
 * and one opening with "`<type>` only" restricts the field to that type of the row; any other text is prose. Rows
 * whose data cell is prose (score.posted, run.completed) name no field and are skipped.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EVENT_DATA } from '../../api/events/payloads.ts';
import { EVENT_TYPES, type EventType } from '../../pipeline/events/event-types.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

interface NamedField {
  types: EventType[];
  field: string;
  subfields: string[];
}

/** Splits on commas outside parentheses. */
function splitTopLevel(cell: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of cell) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** The fields the README's events table names, per row's types. */
function readmeFields(): NamedField[] {
  const section = README.slice(README.indexOf('## Events: the live stream and webhooks'));
  const rows = section.split('\n').filter((l) => /^\| `[a-z]+\.[a-z]+`/.test(l));
  expect(rows.length).toBeGreaterThanOrEqual(5);
  const named: NamedField[] = [];
  for (const row of rows) {
    // Cells split on unescaped pipes (the "when" cell writes |consensus − market| as \|…\|).
    const cells = row.split(/(?<!\\)\|/).map((c) => c.trim()).filter((c, i, all) => i > 0 && i < all.length - 1);
    const types = [...cells[0]!.matchAll(/`([a-z]+\.[a-z]+)`/g)].map((m) => m[1] as EventType);
    for (const t of types) expect(EVENT_TYPES, `README names an event type ${t}`).toContain(t);
    const items = splitTopLevel(cells.at(-1)!).map((item) => item.match(/^([a-z_]+)(?: \((.*)\))?$/s));
    if (items.some((m) => m === null)) continue; // prose, not a list of fields
    for (const m of items) {
      const [, field, paren = ''] = m!;
      const only = paren.match(/^`([a-z]+\.[a-z]+)` only(?:$|[:;])/);
      const subfields = /^[a-z_]+(, [a-z_]+)*$/.test(paren) ? paren.split(', ') : [];
      named.push({ types: only ? [only[1] as EventType] : types, field: field!, subfields });
    }
  }
  return named;
}

describe("the README's events table names only fields the payloads carry", () => {
  it('every field of every row is in the payload schema of each type of the row (outside check: direction on edge.closed)', () => {
    const named = readmeFields();
    expect(named.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const { types, field, subfields } of named) {
      for (const type of types) {
        const shape = (EVENT_DATA[type] as z.ZodObject).shape as Record<string, z.ZodType>;
        if (!(field in shape)) {
          missing.push(`${type}.${field}`);
          continue;
        }
        const inner = shape[field] as z.ZodObject;
        for (const sub of subfields) if (!(inner.shape && sub in inner.shape)) missing.push(`${type}.${field}.${sub}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
