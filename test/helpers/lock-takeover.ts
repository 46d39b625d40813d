/**
 * A takeover of the run lock while a sync waits for a venue: the loopback Manifold replay (its
 * GET /v0/markets page, test/fixtures/venues/manifold, modelled on https://docs.manifold.markets/api)
 * writes `holder` over the lock file as it answers, as another process judging the lock stale during
 * a pause (Ctrl-Z, a paused container) would.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { json, startReplayServer } from './replay-server.ts';

const PAGE = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'));

/**
 * Runs `body` with Manifold the only venue, at the replay that takes the lock `lockPath` over
 * (process.env restored after); resolves with how many requests the replay answered.
 */
export async function withLockTakenAtManifold(lockPath: string, holder: string, body: () => Promise<unknown>): Promise<number> {
  const manifold = await startReplayServer([{ path: '/v0/markets', responses: () => (writeFileSync(lockPath, holder), json(PAGE)) }]);
  const saved = { ...process.env };
  Object.assign(process.env, { QUORUM_VENUES: 'manifold', QUORUM_MANIFOLD_URL: `${manifold.url}/v0`, QUORUM_MANIFOLD_RPS: '1000', QUORUM_FRED_API_KEY: '' });
  try {
    await body();
    return manifold.log.length;
  } finally {
    process.env = saved;
    await manifold.close();
  }
}
