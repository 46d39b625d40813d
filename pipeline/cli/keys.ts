/**
 * `quorum keys ...`: API key administration on the key file of QUORUM_DATA_DIR
 * (`<dataDir>/state/keys.json`). A running server picks changes up within about a second.
 *
 *   quorum keys create --plan pro|api|enterprise [--scope probability] --name NAME
 *       prints {"key": "qrm_…", "id", "name", "plan", "scopes", "hint", "created_at"} — the key is
 *       shown this once; only its SHA-256 is stored.
 *   quorum keys list [--json]     every key (never the key itself): id, name, plan, scopes, hint,
 *                                 created_at, revoked_at
 *   quorum keys revoke <id>       revokes a key (idempotent); the next request with it is a 401 (the
 *                                 key itself given instead of its id: refused, naming the id)
 * Exit codes: 0 ok, 1 error (bad input, unknown id, unreadable key file).
 *
 * Every command says on stderr which data directory it used (stdout stays machine-readable) and
 * whether a running server has that directory open (`<dataDir>/server.json`, written by the
 * server: api/server-record.ts). Without one it warns: a key written where no server reads is
 * refused by a server started on another directory.
 */
import { join } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createKey, isWellFormedKey, keysFile, readKeys, revokeKey, sha256Hex, type KeyRecord } from '../../api/auth/keys.ts';
import { redactKeys } from '../../api/logging/redact.ts';
import { KEY_PLANS, SCOPES, type KeyPlan, type Scope } from '../../api/auth/plans.ts';
import { findServer } from '../../api/server-record.ts';
import { loadConfig } from '../config.ts';
import { checkDataFormat } from '../warehouse/data-format.ts';
import { unknownVariableMessage } from '../env.ts';
import { unwritable } from '../fs/paths.ts';
import { UNPRINTABLE } from '../text/unprintable.ts';

/** The data directory (absolute), said on stderr with the server that has it open, if any. */
function dataDir(): string {
  const config = loadConfig();
  const dir = config.dataDir;
  for (const u of config.unknownVariables) console.error(`quorum keys: ${unknownVariableMessage(u)}`);
  const from = process.env.QUORUM_DATA_DIR?.trim() ? 'QUORUM_DATA_DIR' : 'the default; set QUORUM_DATA_DIR to use another';
  console.error(`quorum keys: data directory ${dir} (${from})`);
  console.error(serverNote(dir));
  checkDataFormat(dir); // a newer version's directory is refused (../warehouse/data-format.ts)
  return dir;
}

/** What to do about a data directory this process may not read or write (another user's, say). */
const ACCESS_FIX = "run the command as the user that owns the data directory (the server's), or give this one access; nothing was changed";

/**
 * Throws, naming QUORUM_DATA_DIR, unless this process can write the key file's directory
 * (`<dataDir>/state`, or the part of it that exists, where it would be made). QA: on another
 * user's directory `keys create` stopped with "EACCES: permission denied, mkdir '<dir>/state'" (or
 * "open '<dir>/state/keys.json.lock'"), naming no setting, as run, sync, import and serve no
 * longer do (./main.ts, api/state-paths.ts).
 */
export function requireWritableState(dataDir: string): void {
  const state = join(dataDir, 'state');
  const denied = unwritable(state);
  if (denied) {
    const what = denied.existing === state ? denied.existing : `${denied.existing} (to make ${state})`;
    throw new Error(`QUORUM_DATA_DIR: ${dataDir} is not writable by this process (${denied.code} on ${what}): ${ACCESS_FIX}`);
  }
}

/** The key file's records; one this process may not read is refused naming QUORUM_DATA_DIR (above). */
export function readKeyFile(dataDir: string): KeyRecord[] {
  const file = keysFile(dataDir);
  try {
    return readKeys(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    throw new Error(`QUORUM_DATA_DIR: ${dataDir} is not readable by this process (${code} on ${(err as NodeJS.ErrnoException).path ?? file}): ${ACCESS_FIX}`);
  }
}

/** One line on whether a server reads `dir` (a warning when none does). */
export function serverNote(dir: string): string {
  const found = findServer(dir);
  switch (found.state) {
    case 'running':
      return `quorum keys: the server at ${found.record.url} (pid ${found.record.pid}) uses this directory and picks changes up within about a second`;
    case 'other-host':
      return `quorum keys: this directory is recorded as open by a server on host ${found.record.host} (${found.record.address}); not checked from here`;
    case 'stale':
      return `quorum keys: warning: no running server uses this directory (the server recorded in it, pid ${found.record.pid}, has exited); a server started on another directory will not see this change`;
    case 'none':
      return 'quorum keys: warning: no running server uses this directory; a server started on another directory will not see this change';
  }
}

function run(body: () => void): void {
  let code = 0;
  try {
    body();
  } catch (err) {
    console.error(`quorum keys: ${redactKeys(err instanceof Error ? err.message : String(err))}`);
    code = 1;
  }
  process.exit(code);
}

/**
 * Throws when `given`, where a key id (key_…) goes, is an API key itself (a slip: the key instead
 * of its id): the message names the key's id, found by its SHA-256 in `dataDir`'s key file, and
 * never the key (QA: `quorum keys revoke qrm_…` printed 'no key with id "qrm_…"' to stderr, where
 * terminals' scrollback and CI logs keep it). Anything else passes through.
 */
export function refuseKeyAsId(dataDir: string, given: string): void {
  const key = given.trim();
  if (!isWellFormedKey(key)) return;
  const digest = sha256Hex(key);
  const record = readKeyFile(dataDir).find((k) => k.sha256 === digest);
  throw new Error(
    record
      ? `that is an API key, not a key id: its id is ${record.id} (quorum keys list); a key typed on a command line is kept in the shell's history`
      : 'that is an API key, not a key id (key_…, as quorum keys list shows), and no key in this data directory is that key',
  );
}

function publicView(r: KeyRecord) {
  return {
    id: r.id,
    name: r.name,
    plan: r.plan,
    scopes: r.scopes,
    hint: r.hint,
    created_at: r.created_at,
    revoked_at: r.revoked_at,
  };
}

function collectScope(value: string, previous: Scope[] = []): Scope[] {
  if (!(SCOPES as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`unknown scope "${value}" (one of: ${SCOPES.join(', ')})`);
  }
  return [...previous, value as Scope];
}

export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create a key and print it once')
    .addOption(new Option('--plan <plan>', 'the key\'s plan').choices([...KEY_PLANS]).makeOptionMandatory())
    .option('--scope <scope>', `an extra scope (repeatable): ${SCOPES.join(', ')}`, collectScope)
    .requiredOption('--name <name>', 'who the key is for')
    .action((opts: { plan: KeyPlan; scope?: Scope[]; name: string }) =>
      run(() => {
        const name = opts.name.trim();
        if (name === '' || name.length > 200 || UNPRINTABLE.test(name)) {
          throw new Error('--name must be 1 to 200 characters without control characters (a newline, a tab, an escape, a bidirectional override)');
        }
        const dir = dataDir();
        requireWritableState(dir);
        const { key, record } = createKey(dir, { name, plan: opts.plan, scopes: opts.scope ?? [] });
        console.log(JSON.stringify({ key, ...publicView(record) }));
        console.error('Store this key now: it is shown only once (only its SHA-256 is kept).');
      }),
    );

  keys
    .command('list')
    .description('list keys (never the keys themselves)')
    .option('--json', 'one JSON array')
    .action((opts: { json?: boolean }) =>
      run(() => {
        const list = readKeyFile(dataDir()).map(publicView);
        if (opts.json) {
          console.log(JSON.stringify(list));
          return;
        }
        if (list.length === 0) {
          console.log('no keys');
          return;
        }
        const rows = list.map((k) => [
          k.id, k.plan, `…${k.hint}`, k.revoked_at ? 'revoked' : 'active', k.created_at, k.revoked_at ?? '-', k.scopes.join(',') || '-', k.name,
        ]);
        for (const line of alignedTable(['id', 'plan', 'key', 'state', 'created_at', 'revoked_at', 'scopes', 'name'], rows)) console.log(line);
      }),
    );

  keys
    .command('revoke')
    .description('revoke a key by id')
    .argument('<id>', 'the key id (key_…), as `keys list` shows it')
    .action((id: string) =>
      run(() => {
        const dir = dataDir();
        refuseKeyAsId(dir, id);
        // Looked up before the key file is locked, which makes state/ (QA: a mistyped id or
        // QUORUM_DATA_DIR left a new, empty data directory behind); again under the lock below.
        if (!readKeyFile(dir).some((k) => k.id === id)) throw new Error(`no key with id ${JSON.stringify(id)}`);
        requireWritableState(dir);
        const rec = revokeKey(dir, id);
        if (!rec) throw new Error(`no key with id ${JSON.stringify(id)}`);
        console.log(JSON.stringify(publicView(rec)));
      }),
    );
}

/** Rows under a header, every column padded to its widest cell (the last one left as is). */
function alignedTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)];
}
