/**
 * Per-tenant run concurrency of the HTTP service: at most `maxConcurrentRuns` at once, a FIFO queue of `maxQueuedRuns` waiters (default none), and
 * `undefined` beyond it (`429` with `Retry-After`). A slot is held until the run's outcome settles; release is idempotent. Slots are counted in
 * memory or in PostgreSQL advisory locks across replicas (polled every `pollMs`).
 */
import { InvalidArgumentError } from "../core/errors.ts";
import { ignoreError } from "../core/ignored.ts";

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
  /**
   * A slot of `tenant`'s, waiting in its queue when none is free; undefined when the queue is full, or when `signal` aborts while it waits (the
   * client went away: it leaves the queue and its prompt never runs).
   */
  acquire(tenant: string, signal?: AbortSignal): Promise<(() => void) | undefined>;
  readonly retryAfterSeconds: number;
}

/**
 * Slots counted in this process.
 * @example
 * const store = createMemoryRunSlotStore();
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
 * @throws InvalidArgumentError for a limit that is not a whole number (≥ 1 for runs, ≥ 0 for the queue).
 * @example
 * const slots = createRunSlots({ maxConcurrentRuns: (tenant) => (tenant === "big" ? 8 : 2) });
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
        .catch(ignoreError("a slot release failed; the next waiter is woken and the slot store frees the slot with its connection"))
        .then(() => queues.get(tenant)?.[0]?.());
    };
  };

  return {
    retryAfterSeconds,
    async acquire(tenant, signal) {
      if (signal?.aborted) return undefined;
      if (!queues.get(tenant)?.length) {
        const release = await store.tryAcquire(tenant, limit(tenant));
        if (release) return wrap(release, tenant);
      }
      // Read after the await: other callers may have joined the line meanwhile.
      const queue = queues.get(tenant) ?? [];
      if (queue.length >= maxQueued) return undefined;
      queues.set(tenant, queue);
      // Wait in line: woken by a local release or by the poll, first in line first; an abort leaves the line.
      return new Promise<(() => void) | undefined>((resolve) => {
        let busy = false;
        let left = false;
        const leave = () => {
          left = true;
          clearInterval(timer);
          signal?.removeEventListener("abort", onAbort);
          const at = queue.indexOf(attempt);
          if (at >= 0) queue.splice(at, 1);
          if (queue.length === 0 && queues.get(tenant) === queue) queues.delete(tenant);
        };
        const onAbort = () => {
          if (left) return;
          const wasFirst = queue[0] === attempt;
          leave();
          resolve(undefined);
          // The next in line may take a slot that is free now.
          if (wasFirst) queue[0]?.();
        };
        const attempt = () => {
          if (busy || left || queue[0] !== attempt) return;
          busy = true;
          void store.tryAcquire(tenant, limit(tenant)).then(
            (release) => {
              busy = false;
              if (!release) return;
              if (left) {
                // Aborted while this try was in flight: the slot goes back at once.
                void release().catch(ignoreError("a slot taken for a client that went away could not be given back; the slot store frees it with its connection"));
                return;
              }
              leave();
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
        signal?.addEventListener("abort", onAbort, { once: true });
        // Aborted while the first try was in flight: it never joins the line.
        if (signal?.aborted) return onAbort();
        attempt();
      });
    },
  };
}
