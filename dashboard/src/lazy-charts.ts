/**
 * The charts (Observable Plot and d3, most of the dashboard's JavaScript) load as their own chunk:
 * a page asks for it while its API calls are in flight, and the shell preloads it
 * (<link rel="modulepreload">), so neither waits on the other. Only types are imported statically
 * from charts.ts; a static value import would pull Plot back into the first chunk.
 */
export type Charts = typeof import('./charts.ts');

let loading: Promise<Charts> | null = null;

/**
 * The charts module, fetched and evaluated once. A failed fetch is not kept: the page that asked
 * fails, and the next page asks again instead of inheriting the rejection until a reload.
 */
export function loadCharts(): Promise<Charts> {
  return (loading ??= import('./charts.ts').catch((err: unknown) => {
    loading = null;
    throw err;
  }));
}
