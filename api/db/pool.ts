/**
 * A small pool of DuckDB connections over one instance: one connection per in-flight query.
 *
 * Each pooled connection remembers the schema it was last switched to, so the snapshot reader
 * only issues `SET schema` when a query runs against a different snapshot than the connection's
 * previous one.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

export interface PooledConnection {
  readonly connection: DuckDBConnection;
  /** The schema this connection was last switched to (null: never). */
  schema: string | null;
}

export class ConnectionPool {
  readonly #instance: DuckDBInstance;
  readonly #size: number;
  readonly #all: PooledConnection[] = [];
  readonly #idle: PooledConnection[] = [];
  readonly #waiters: Array<{ resolve: (c: PooledConnection) => void; reject: (e: Error) => void }> = [];
  #creating = 0;
  #closed = false;

  constructor(instance: DuckDBInstance, size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`pool size must be a positive integer, got ${size}`);
    this.#instance = instance;
    this.#size = size;
  }

  /** Connections currently handed out. */
  get busy(): number {
    return this.#all.length - this.#idle.length;
  }

  /** Takes an idle connection, opens a new one below the size cap, or waits for a release. */
  async acquire(): Promise<PooledConnection> {
    if (this.#closed) throw new Error('connection pool is closed');
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#all.length + this.#creating < this.#size) {
      this.#creating++;
      try {
        const connection = await this.#instance.connect();
        const pooled: PooledConnection = { connection, schema: null };
        if (this.#closed) {
          connection.closeSync();
          throw new Error('connection pool is closed');
        }
        this.#all.push(pooled);
        return pooled;
      } finally {
        this.#creating--;
      }
    }
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Gives a connection back: to the first waiter, else to the idle list. */
  release(pooled: PooledConnection): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve(pooled);
    else this.#idle.push(pooled);
  }

  /** Runs `fn` with a pooled connection, releasing it afterwards whatever happens. */
  async use<T>(fn: (pooled: PooledConnection) => Promise<T>): Promise<T> {
    const pooled = await this.acquire();
    try {
      return await fn(pooled);
    } finally {
      this.release(pooled);
    }
  }

  /** Rejects waiters and closes every connection. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.reject(new Error('connection pool is closed'));
    for (const p of this.#all.splice(0)) {
      try {
        p.connection.closeSync();
      } catch {
        // already closed
      }
    }
    this.#idle.length = 0;
  }
}
