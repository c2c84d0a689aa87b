/**
 * Per-tenant run concurrency of the HTTP service: at most `maxConcurrentRuns` runs of one tenant
 * at once, a bounded queue of runs waiting for a slot, and a refusal beyond it.
 *
 * Contract (ours; the shape follows purista's `inMemoryRunConcurrency`):
 * - {@link RunSlots.acquire} resolves with a release function once the tenant has a free slot;
 *   while none is free the caller waits in the tenant's FIFO queue if it holds fewer than
 *   `maxQueuedRuns` waiters (default 0: no queue), else it gets `undefined` at once (the service
 *   answers `429` with `Retry-After`);
 * - a slot is held from before the run starts until it ends (its outcome settles), whatever the
 *   client does with the stream; release is idempotent;
 * - slots are counted by a {@link RunSlotStore}: {@link createMemoryRunSlotStore} (this process)
 *   or `createPostgresRunSlotStore` (`src/store/pg-run-slots.ts`: PostgreSQL advisory locks, so the
 *   limit holds across replicas sharing the database); a queued waiter retries the store when a
 *   local slot is released and every `pollMs` (default 250) for slots released by other replicas.
 *
 * @example
 * ```ts
 * const slots = createRunSlots({ maxConcurrentRuns: 2, maxQueuedRuns: 10 });
 * const release = await slots.acquire("acme");
 * if (!release) return tooManyRuns();
 * ```
 */
import { InvalidArgumentError } from "../core/errors.ts";

/** Where slots are counted: tries to take one of `max` slots of `tenant`. */
export interface RunSlotStore {
  /** A release function when a slot was free, else undefined. Never waits for one. */
  tryAcquire(tenant: string, max: number): Promise<(() => Promise<void>) | undefined>;
  close?(): Promise<void>;
}

/** Options of {@link createRunSlots}. */
export interface RunSlotsOptions {
  /** Runs of one tenant at once (a whole number ≥ 1), or per tenant. */
  maxConcurrentRuns: number | ((tenant: string) => number);
  /** Runs of one tenant waiting for a slot (default 0); beyond it `acquire` gives undefined. */
  maxQueuedRuns?: number;
  /** Seconds a refused client is told to wait (`Retry-After`, default 1). */
  retryAfterSeconds?: number;
  /** Default: this process only ({@link createMemoryRunSlotStore}). */
  store?: RunSlotStore;
  /** How often a queued waiter re-checks the store, in ms (default 250). */
  pollMs?: number;
}

/** The concurrency gate (see the module contract). */
export interface RunSlots {
  acquire(tenant: string): Promise<(() => void) | undefined>;
  readonly retryAfterSeconds: number;
}

/**
 * Slots counted in this process.
 *
 * @example
 * ```ts
 * const store = createMemoryRunSlotStore();
 * ```
 */
export function createMemoryRunSlotStore(): RunSlotStore {
  const held = new Map<string, number>();
  return {
    async tryAcquire(tenant, max) {
      const count = held.get(tenant) ?? 0;
      if (count >= max) return undefined;
      held.set(tenant, count + 1);
      return async () => {
        const now = (held.get(tenant) ?? 1) - 1;
        if (now <= 0) held.delete(tenant);
        else held.set(tenant, now);
      };
    },
  };
}

function wholeAtLeast(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}; got ${String(value)}.`);
  return value;
}

/**
 * Creates the gate (see the module contract).
 *
 * @throws InvalidArgumentError for a limit that is not a whole number (≥ 1 for runs, ≥ 0 for the queue).
 * @example
 * ```ts
 * const slots = createRunSlots({ maxConcurrentRuns: (tenant) => (tenant === "big" ? 8 : 2) });
 * ```
 */
export function createRunSlots(options: RunSlotsOptions): RunSlots {
  const limit = (tenant: string) => wholeAtLeast("maxConcurrentRuns", typeof options.maxConcurrentRuns === "function" ? options.maxConcurrentRuns(tenant) : options.maxConcurrentRuns, 1);
  if (typeof options.maxConcurrentRuns === "number") wholeAtLeast("maxConcurrentRuns", options.maxConcurrentRuns, 1);
  const maxQueued = wholeAtLeast("maxQueuedRuns", options.maxQueuedRuns ?? 0, 0);
  const retryAfterSeconds = wholeAtLeast("retryAfterSeconds", options.retryAfterSeconds ?? 1, 0);
  const pollMs = options.pollMs ?? 250;
  const store = options.store ?? createMemoryRunSlotStore();
  const queues = new Map<string, (() => void)[]>();

  const wrap = (release: () => Promise<void>, tenant: string): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      void release()
        .catch(() => undefined)
        .then(() => queues.get(tenant)?.[0]?.());
    };
  };

  return {
    retryAfterSeconds,
    async acquire(tenant) {
      if (!queues.get(tenant)?.length) {
        const release = await store.tryAcquire(tenant, limit(tenant));
        if (release) return wrap(release, tenant);
      }
      // Read after the await: other callers may have joined the line meanwhile.
      const queue = queues.get(tenant) ?? [];
      if (queue.length >= maxQueued) return undefined;
      queues.set(tenant, queue);
      // Wait in line: woken by a local release or by the poll, first in line first.
      return new Promise<(() => void) | undefined>((resolve) => {
        let busy = false;
        const attempt = () => {
          if (busy || queue[0] !== attempt) return;
          busy = true;
          void store.tryAcquire(tenant, limit(tenant)).then(
            (release) => {
              busy = false;
              if (!release) return;
              clearInterval(timer);
              queue.shift();
              if (queue.length === 0) queues.delete(tenant);
              resolve(wrap(release, tenant));
              queue[0]?.();
            },
            () => {
              busy = false;
            },
          );
        };
        queue.push(attempt);
        const timer = setInterval(attempt, pollMs);
        timer.unref?.();
        attempt();
      });
    },
  };
}
