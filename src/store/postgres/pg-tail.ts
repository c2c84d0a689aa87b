/**
 * The live half of the PostgreSQL log's subscriptions (`pg-event-log.ts`): while any listener exists, one dedicated client LISTENs on the schema's
 * channel (`pg-schema.ts`) and a timer polls the head every `pollIntervalMs` as a fallback; either wakes every listener. A LISTEN client that fails is
 * dropped and the next poll tick connects again; a failed poll is retried at the next tick. `stop()` ends the client once no listener is left.
 */
import type pg from "pg";
import { ignoreError, ignored } from "../../core/ignored.ts";
import type { CommitListener } from "../log/log-subscription.ts";
import { notifyChannel, quoteSchema } from "./pg-schema.ts";

/** What the tail needs of its log. */
export interface TailOptions {
  pool: pg.Pool;
  connect(): Promise<pg.Client>;
  ready: Promise<void>;
  schema: string;
  pollIntervalMs: number;
  wake(): void;
  listeners: Set<CommitListener>;
}

/** The tail of one log (see the module contract): `listen` registers a listener and returns its removal. */
export function createTail(options: TailOptions) {
  const { pool, listeners } = options;
  const channel = notifyChannel(options.schema);
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastHead = -1;

  const connect = (): void => {
    if (client || connecting || listeners.size === 0) return;
    connecting = (async () => {
      const next = await options.connect();
      next.on("error", () => {
        if (client === next) client = undefined;
        void next.end().catch(ignoreError("ending a failed LISTEN client; the poll goes on"));
      });
      next.on("notification", () => options.wake());
      await next.query(`LISTEN "${channel}"`);
      if (listeners.size === 0) {
        await next.end();
        return;
      }
      client = next;
      // Commits between the subscription's first read and LISTEN are caught by this wake-up.
      options.wake();
    })()
      .catch(ignoreError("a failed LISTEN connection; the poll timer wakes the subscriptions and the next subscribe tries again"))
      .finally(() => (connecting = undefined));
  };
  const poll = async (): Promise<void> => {
    connect();
    try {
      await options.ready;
      const rows = await pool.query<{ position: string }>(`SELECT position FROM ${quoteSchema(options.schema)}.log_head`);
      const head = Number(rows.rows[0]?.position ?? 0);
      if (head !== lastHead) {
        lastHead = head;
        options.wake();
      }
    } catch (error) {
      ignored("a failed head poll: the next tick retries; a persistent failure surfaces in the subscriptions' own reads", error);
    }
  };
  const update = (): void => {
    if (listeners.size > 0 && timer === undefined) {
      timer = setInterval(() => void poll(), options.pollIntervalMs);
      connect();
    } else if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
      const idle = client;
      client = undefined;
      if (idle) void idle.end().catch(ignoreError("ending the idle LISTEN client, best effort"));
    }
  };
  return {
    listen(listener: CommitListener): () => void {
      listeners.add(listener);
      update();
      return () => {
        listeners.delete(listener);
        update();
      };
    },
    async stop(): Promise<void> {
      update();
      await connecting;
      update();
    },
  };
}
