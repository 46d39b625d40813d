/**
 * The charts (Observable Plot and d3, most of the dashboard's JavaScript) load as their own chunk:
 * a page asks for it while its API calls are in flight, and the shell preloads it
 * (<link rel="modulepreload">), so neither waits on the other. Only types are imported statically
 * from charts.ts; a static value import would pull Plot back into the first chunk.
 */
export type Charts = typeof import('./charts.ts');

let loading: Promise<Charts> | null = null;

/** The charts module, fetched and evaluated once. */
export function loadCharts(): Promise<Charts> {
  return (loading ??= import('./charts.ts'));
}
