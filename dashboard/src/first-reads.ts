/**
 * The query values of the dashboard's first requests, shared with the server (api/app.ts
 * FIRST_READS primes its cache with exactly these requests after each snapshot load, so the cache
 * keys match by construction). Plain data: this file is also compiled by the server's tsconfig.
 */
/** The overview's disagreement-against-error scatter: the most recently resolved questions. */
export const OVERVIEW_RESOLVED_LIMIT = '500';
/** Rows per page of the active predictions table. */
export const PREDICTIONS_PAGE_LIMIT = '50';
