/**
 * `quorum webhooks ...`: webhook subscriptions on QUORUM_DATA_DIR (`<dataDir>/state/webhooks.json`),
 * the same store `POST/GET/DELETE /api/webhooks/` use; a running server picks changes up at its next
 * delivery or request.
 *
 *   quorum webhooks create --key <key id> --url URL [--types a,b] [--description TEXT]
 *       prints the subscription with its whsec_ secret (shown this once); the key must be an
 *       active (not revoked) enterprise key, as for POST /api/webhooks/
 *   quorum webhooks list [--key <key id>] [--json]
 *   quorum webhooks delete <id>
 *   quorum webhooks enable <id>           enables a disabled subscription again (same key rule)
 *   quorum webhooks rotate-secret <id>    prints the new secret; the old one signs for 24 h more
 * Exit codes: 0 ok, 1 error (bad input, unknown id, a refused key or URL).
 */
import type { Command } from 'commander';
import { keysFile, readKeys } from '../../api/auth/keys.ts';
import { refuseKeyAsId } from './keys.ts';
import { redactKeys } from '../../api/logging/redact.ts';
import { ownerRefusal } from '../../api/events/webhooks/owner.ts';
import { publicView, SubscriptionStore } from '../../api/events/webhooks/store.ts';
import { checkWebhookUrl } from '../../api/events/webhooks/url-policy.ts';
import { loadConfig } from '../config.ts';
import { checkDataFormat } from '../warehouse/data-format.ts';
import { unknownVariableMessage } from '../env.ts';
import { EVENT_TYPES } from '../events/event-types.ts';
import { loadEventsConfig } from '../events/config.ts';
import { UNPRINTABLE } from '../text/unprintable.ts';

async function run(body: () => Promise<void> | void): Promise<void> {
  let code = 0;
  try {
    await body();
  } catch (err) {
    console.error(`quorum webhooks: ${redactKeys(err instanceof Error ? err.message : String(err))}`);
    code = 1;
  }
  process.exit(code);
}

/**
 * Throws unless key `keyId` of the key file in `dataDir` may own webhooks (it exists, is not
 * revoked, is enterprise): the CLI must not give a key what the API would refuse it.
 */
function requireWebhookKey(dataDir: string, keyId: string): void {
  refuseKeyAsId(dataDir, keyId);
  const refusal = ownerRefusal(keyId, readKeys(keysFile(dataDir)).find((k) => k.id === keyId) ?? null);
  if (refusal) throw new Error(`refused: ${refusal.reason}; webhooks need an active (not revoked) enterprise key (quorum keys list)`);
}

function store(): SubscriptionStore {
  const config = loadConfig();
  const dir = config.dataDir;
  for (const u of config.unknownVariables) console.error(`quorum webhooks: ${unknownVariableMessage(u)}`);
  console.error(`quorum webhooks: data directory ${dir}`);
  checkDataFormat(dir); // a newer version's directory is refused (../warehouse/data-format.ts)
  return new SubscriptionStore(dir);
}

export function registerWebhooksCommands(program: Command): void {
  const wh = program.command('webhooks').description('webhook subscriptions: create, list, delete, enable, rotate-secret');
  wh.command('create')
    .description('subscribe a URL to events for an API key (prints the whsec_ secret once)')
    .requiredOption('--key <id>', 'the API key id that owns the subscription (quorum keys list)')
    .requiredOption('--url <url>', 'https URL receiving the deliveries')
    .option('--types <list>', `comma-separated event types (default: all): ${EVENT_TYPES.join(', ')}`)
    .option('--description <text>', 'a note for humans')
    .action((opts: { key: string; url: string; types?: string; description?: string }) =>
      run(async () => {
        const types = opts.types === undefined ? null : opts.types.split(',').map((t) => t.trim()).filter(Boolean);
        // As the API refuses an empty list: a subscription to no type never gets an event (QA: it was made).
        if (types?.length === 0) throw new Error('--types names no event type (leave it out for every type)');
        if (opts.description !== undefined && (opts.description.length > 500 || UNPRINTABLE.test(opts.description))) {
          throw new Error('--description must be at most 500 characters without control characters (a newline, a tab, an escape, a bidirectional override), as the API takes it');
        }
        for (const t of types ?? []) if (!(EVENT_TYPES as readonly string[]).includes(t)) throw new Error(`unknown event type "${t}"`);
        const s = store();
        requireWebhookKey(loadConfig().dataDir, opts.key);
        // stored as parsed (percent-encoded), as the API stores it
        const url = await checkWebhookUrl(opts.url, loadEventsConfig().webhooks.allowPrivate);
        const sub = s.create({ keyId: opts.key, url: url.href, types, description: opts.description ?? null });
        console.log(JSON.stringify({ ...publicView(sub), key_id: sub.key_id, secret: sub.secrets[0]!.secret }));
      }),
    );
  wh.command('list')
    .description('subscriptions (never their secrets)')
    .option('--key <id>', 'only this API key\'s')
    .option('--json', 'one JSON line per subscription')
    .action((opts: { key?: string; json?: boolean }) =>
      run(() => {
        const list = store().list(opts.key ?? null);
        for (const s of list) {
          const v = { ...publicView(s), key_id: s.key_id };
          console.log(opts.json || !process.stdout.isTTY ? JSON.stringify(v) : `${s.id}  ${s.status.padEnd(8)}  ${s.key_id}  ${s.url}  ${(s.types ?? ['*']).join(',')}`);
        }
      }),
    );
  wh.command('delete <id>')
    .description('delete a subscription (its pending deliveries are dropped)')
    .action((id: string) =>
      run(() => {
        const s = store();
        // Looked up before the subscriptions file is locked, which makes state/ (QA: a mistyped
        // id or QUORUM_DATA_DIR left a new, empty data directory behind); again under the lock.
        if (!s.get(id) || !s.remove(id)) throw new Error(`no subscription ${id}`);
      }),
    );
  wh.command('enable <id>')
    .description('enable a disabled subscription again (its key must be an active enterprise key); then replay what it missed')
    .action((id: string) =>
      run(() => {
        const s = store();
        const sub = s.get(id);
        if (!sub) throw new Error(`no subscription ${id}`);
        requireWebhookKey(loadConfig().dataDir, sub.key_id);
        s.enable(id);
        console.log(JSON.stringify({ ...publicView(s.get(id)!), key_id: sub.key_id }));
      }),
    );
  wh.command('rotate-secret <id>')
    .description('a new signing secret; the old one keeps signing for 24 h')
    .action((id: string) =>
      run(() => {
        const s = store();
        if (!s.get(id)) throw new Error(`no subscription ${id}`); // before the lock, as delete
        const r = s.rotate(id);
        if (!r) throw new Error(`no subscription ${id}`);
        console.log(JSON.stringify({ id, secret: r.secret, previous_secret_expires_at: r.previous_expires_at }));
      }),
    );
}
