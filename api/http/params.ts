/**
 * Query and path parameter parsing. Every failure is a 400 `invalid_parameter` problem naming the
 * parameter and what is allowed.
 *
 * Conventions (documented in the README):
 * - unknown query parameters are ignored (as datasette does);
 * - an empty value (`?venue=`) is the same as leaving the parameter out;
 * - a parameter given more than once is an error;
 * - categories match case-insensitively and are answered in their canonical lower-case form.
 */
import type { Request } from 'express';
import { CATEGORIES, type Category } from '../../pipeline/warehouse/tables.ts';
import { ApiError } from '../errors/problem.ts';

/** The single string value of query parameter `name`, or undefined when absent or empty. */
export function queryString(req: Request, name: string, maxLength = 200): string | undefined {
  const raw: unknown = (req.query as Record<string, unknown>)[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw ApiError.invalidParameter(name, `Query parameter '${name}' must be given once, as a plain value.`);
  if (raw === '') return undefined;
  if (raw.length > maxLength) {
    throw ApiError.invalidParameter(name, `Query parameter '${name}' is longer than ${maxLength} characters.`);
  }
  return raw;
}

export interface IntRange {
  min: number;
  max: number;
  default: number;
}

/** A decimal integer in [min, max]; digits only (no sign, exponent, spaces or fraction). */
export function queryInt(req: Request, name: string, range: IntRange): number {
  const raw = queryString(req, name, 32);
  if (raw === undefined) return range.default;
  const allowed = { min: range.min, max: range.max };
  const detail = `Query parameter '${name}' must be an integer from ${range.min} to ${range.max}.`;
  if (!/^[0-9]{1,9}$/.test(raw)) throw ApiError.invalidParameter(name, detail, allowed);
  const n = Number(raw);
  if (n < range.min || n > range.max) throw ApiError.invalidParameter(name, detail, allowed);
  return n;
}

/** Canonical category for `value` (case-insensitive), or undefined. */
export function matchCategory(value: string): Category | undefined {
  const lower = value.toLowerCase();
  return CATEGORIES.find((c) => c === lower);
}

/** The `category` query filter, validated against the nine categories. */
export function queryCategory(req: Request, name = 'category'): Category | undefined {
  const raw = queryString(req, name, 64);
  if (raw === undefined) return undefined;
  const c = matchCategory(raw);
  if (!c) {
    throw ApiError.invalidParameter(
      name,
      `Query parameter '${name}' must be one of the ${CATEGORIES.length} categories: ${CATEGORIES.join(', ')}.`,
      [...CATEGORIES],
    );
  }
  return c;
}
