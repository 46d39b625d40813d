import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const REPO = join(import.meta.dirname, '..', '..');
export const CLI = join(REPO, 'pipeline', 'cli', 'quorum.cjs');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `quorum` CLI to completion. */
export function quorum(args: string[], env: Record<string, string>, timeoutMs = 300_000): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Starts the real `quorum` CLI in the background (to kill it, or to serve). */
export function quorumProcess(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/**
 * Runs the real `quorum` CLI to completion without blocking this process's event loop (needed when
 * the CLI talks to a loopback server that this test process itself runs).
 */
export function quorumAsync(args: string[], env: Record<string, string>, timeoutMs = 300_000): Promise<CliResult> {
  const child = quorumProcess(args, { LOG_LEVEL: 'warn', ...env });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

export interface ServeOutcome {
  /** Where it listens (from its `api listening` log line), or null when it exited first. */
  url: string | null;
  /** Its exit status when it exited before listening, else null. */
  status: number | null;
  /** Its stderr up to then. */
  stderr: string;
}

/**
 * Waits for a `quorum serve`/`start` child (LOG_LEVEL info) to log where it listens, or to exit
 * first; rejects after `timeoutMs`.
 */
export function serveOutcome(child: ChildProcess, timeoutMs = 60_000): Promise<ServeOutcome> {
  let stderr = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve neither listened nor exited: ${stderr}`)), timeoutMs);
    child.stderr!.on('data', (d) => {
      stderr += d;
      const m = /"url":"(http:\/\/[^"]+)"[^\n]*api listening/.exec(stderr);
      if (m) {
        clearTimeout(t);
        resolve({ url: m[1]!, status: null, stderr });
      }
    });
    child.on('close', (status) => {
      clearTimeout(t);
      resolve({ url: null, status, stderr });
    });
  });
}
