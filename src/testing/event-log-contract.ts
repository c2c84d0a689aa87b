/**
 * The EventLog contract suite, exported so that any `EventLog` implementation (Arbor's three and logs built outside this repository) can run the same
 * tests. It takes the runner's functions instead of importing a test framework, so `arbor-agent/testing` does not depend on one.
 */
import type { Observable } from "rxjs";
import { firstValueFrom, take, toArray } from "../core/rx.ts";
import { z } from "zod";
import {
  EventIdReusedError,
  EventSchemaError,
  ExpectedVersionConflictError,
  InvalidArgumentError,
  LogClosedError,
} from "../core/errors.ts";
import type { EventLog, NewEvent, StoredEvent } from "../store/event-log.ts";
import { createDefaultEventRegistry, type EventRegistry } from "../store/events/index.ts";
import { type ContractTestApi, freshLogs, until } from "./contract-api.ts";


const NoteAdded = z.object({ text: z.string(), n: z.number().optional() });
const NoteRemoved = z.object({ n: z.number() });

/** The text of a `note.added` event, read through its schema. */
const textOf = (event: StoredEvent): string => NoteAdded.parse(event.data).text;

/** A registry with the built-in types plus two test types. */
export function testRegistry(): EventRegistry {
  return createDefaultEventRegistry()
    .register("note.added", 1, NoteAdded)
    .register("note.removed", 1, NoteRemoved)
    .register("blob.stored", 1, z.object({ value: z.unknown() }));
}

/** A `note.added` event. */
export function note(text: string, extra: Partial<NewEvent> = {}): NewEvent {
  return { type: "note.added", data: { text }, ...extra };
}

/** Numbered `note.added` events. */
export function notes(count: number, prefix = "n"): NewEvent[] {
  return Array.from({ length: count }, (_, index) => ({ type: "note.added", data: { text: `${prefix}${index}`, n: index } }));
}

/** Resolves with the first `count` events of `events$`. */
export function collect(events$: Observable<StoredEvent>, count: number): Promise<StoredEvent[]> {
  return firstValueFrom(events$.pipe(take(count), toArray()));
}

/** Creates a fresh, empty log for one test. */
export type EventLogFactory = (registry: EventRegistry) => EventLog | Promise<EventLog>;

/**
 * Runs the EventLog contract suite against `factory`, with the test functions of your runner.
 *
 * Each test gets a fresh log from `factory` (given the registry the suite needs: the built-in event types plus `note.added`, `note.removed` and
 * `blob.stored`) and closes it afterwards. The suite checks versions and global positions, every `expectedVersion` mode, atomic batches, idempotent
 * `eventId`s, reads, stream listing and deletion, group commit, and catch-up plus live subscriptions without gaps or duplicates. It registers one
 * `describe` block named `EventLog contract: <name>`; tests time out by your runner's default (PostgreSQL-backed logs may need 10 s or more). Errors
 * are asserted by class (`ExpectedVersionConflictError`, ...), so a custom log must throw Arbor's error classes.
 * @param name - shown in the describe block's title.
 * @param factory - creates one fresh, empty log per test.
 * @param api - `describe`, `it`, `expect` and `afterEach` from vitest (or a runner with the same API).
 * @example
 * import { afterEach, describe, expect, it } from "vitest";
 * import { runEventLogContract } from "arbor-agent/testing";
 * import { createMyEventLog } from "./my-event-log.js";
 *
 * runEventLogContract("my log", (registry) => createMyEventLog({ registry }), { describe, it, expect, afterEach });
 */
export function runEventLogContract(name: string, factory: EventLogFactory, api: ContractTestApi): void {
  const { describe, it, expect, afterEach } = api;
  describe(`EventLog contract: ${name}`, () => {
    const fresh = freshLogs(() => factory(testRegistry()), afterEach);

    it("numbers versions per stream from 1 and global positions across the log without gaps", async () => {
      const log = await fresh();
      expect(await log.headPosition()).toBe(0);
      expect(await log.streamVersion("a")).toBe(0);
      const first = await log.append("a", notes(2, "a"));
      const second = await log.append("b", notes(1, "b"));
      const third = await log.append("a", notes(3, "c"));
      expect(first.events.map((event) => [event.version, event.globalPosition])).toEqual([[1, 1], [2, 2]]);
      expect(second.events.map((event) => [event.version, event.globalPosition])).toEqual([[1, 3]]);
      expect(third.events.map((event) => [event.version, event.globalPosition])).toEqual([[3, 4], [4, 5], [5, 6]]);
      expect(third).toMatchObject({ streamId: "a", nextExpectedVersion: 5, lastGlobalPosition: 6, duplicate: false });
      const all = await log.readAll();
      expect(all.map((event) => event.globalPosition)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(all.map((event) => event.data)).toEqual(["a0", "a1", "b0", "c0", "c1", "c2"].map((text, index) => ({ text, n: [0, 1, 0, 0, 1, 2][index] })));
      expect(await log.streamVersion("a")).toBe(5);
      expect(await log.headPosition()).toBe(6);
      const event = all[0];
      expect(event.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(event).toMatchObject({ streamId: "a", type: "note.added", schemaVersion: 1, metadata: {} });
      expect(Number.isNaN(Date.parse(event.time))).toBe(false);
    });

    it("keeps metadata, caller times and eventIds", async () => {
      const log = await fresh();
      const metadata = { sessionId: "s", runId: "r", turnId: "t", causationId: "c", extra: [1, 2] };
      await log.append("a", [note("x", { eventId: "id-1", metadata, time: "2026-01-02T03:04:05.000Z" })]);
      const [event] = await log.readStream("a");
      expect(event).toMatchObject({ eventId: "id-1", metadata, time: "2026-01-02T03:04:05.000Z" });
    });

    it("enforces every expectedVersion mode and reports conflicts with the actual version, writing nothing", async () => {
      const log = await fresh();
      await expect(log.append("a", [note("x")], { expectedVersion: "stream_exists" })).rejects.toThrow(ExpectedVersionConflictError);
      await expect(log.append("a", [note("x")], { expectedVersion: 1 })).rejects.toThrow(ExpectedVersionConflictError);
      await log.append("a", [note("1")], { expectedVersion: "no_stream" });
      const conflict = await log.append("a", [note("x")], { expectedVersion: "no_stream" }).catch((error: unknown) => error);
      expect(ExpectedVersionConflictError.isInstance(conflict)).toBe(true);
      expect(conflict).toMatchObject({ code: "EXPECTED_VERSION_CONFLICT", streamId: "a", expectedVersion: "no_stream", actualVersion: 1 });
      await expect(log.append("a", [note("x")], { expectedVersion: 0 })).rejects.toMatchObject({ actualVersion: 1 });
      await log.append("a", [note("2")], { expectedVersion: "stream_exists" });
      await log.append("a", [note("3")], { expectedVersion: 2 });
      await expect(log.append("a", [note("stale")], { expectedVersion: 2 })).rejects.toMatchObject({ expectedVersion: 2, actualVersion: 3 });
      await log.append("a", [note("4")], { expectedVersion: "any" });
      await log.append("a", [note("5")]);
      await log.append("b", [note("b")], { expectedVersion: 0 });
      expect((await log.readStream("a")).map((event) => textOf(event))).toEqual(["1", "2", "3", "4", "5"]);
      expect(await log.headPosition()).toBe(6);
    });

    it("rejects bad arguments with InvalidArgumentError naming the field", async () => {
      const log = await fresh();
      await expect(log.append("", [note("x")])).rejects.toThrow(InvalidArgumentError);
      await expect(log.append("a", [note("x")], { expectedVersion: -1 })).rejects.toThrow(/expectedVersion/);
      await expect(log.append("a", [note("x")], { expectedVersion: "latest" as never })).rejects.toThrow(/expectedVersion/);
      await expect(log.append("a", [note("x", { time: "yesterday" })])).rejects.toThrow(/time/);
      await expect(log.append("a", [note("x", { eventId: "d" }), note("y", { eventId: "d" })])).rejects.toThrow(/twice/);
      await expect(log.readStream("a", { limit: -1 })).rejects.toThrow(/limit/);
      await expect(log.readAll({ fromPosition: 1.5 })).rejects.toThrow(/fromPosition/);
      expect(() => log.subscribe({ fromVersion: 2 })).toThrow(/streamId/);
      expect(await log.headPosition()).toBe(0);
    });

    it("writes a batch atomically: one schema-invalid event rejects the whole append and nothing is written", async () => {
      const log = await fresh();
      await log.append("a", [note("keep")]);
      const bad = [note("ok"), { type: "note.added", data: { text: 42 } }, note("ok2")];
      const error = await log.append("a", bad).catch((caught: unknown) => caught);
      expect(EventSchemaError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/events\[1\].*note\.added.*text/);
      await expect(log.append("a", [{ type: "nope.happened", data: {} }])).rejects.toThrow(/unknown event type "nope.happened"/i);
      await expect(log.append("a", [{ type: "blob.stored", data: { value: 10n } }])).rejects.toThrow(/data\.value is a bigint, which is not JSON/);
      // Under a key the schema strips: refused all the same, never dropped.
      await expect(log.append("a", [{ type: "note.added", data: { text: "x", extra: 10n } as never }])).rejects.toThrow(/data\.extra is a bigint, which is not JSON/);
      expect(await log.streamVersion("a")).toBe(1);
      expect(await log.readAll()).toHaveLength(1);
      expect(await log.headPosition()).toBe(1);
    });

    it("treats re-appending the same eventIds as an idempotent no-op returning the original positions", async () => {
      const log = await fresh();
      await log.append("other", [note("o")]);
      const batch = [note("a", { eventId: "e1", metadata: { runId: "r" } }), { type: "note.added", eventId: "e2", data: { n: 1, text: "b" } }];
      const original = await log.append("a", batch, { expectedVersion: "no_stream" });
      await log.append("a", [note("later")]);
      const reordered = [note("a", { eventId: "e1", metadata: { runId: "r" } }), { type: "note.added", eventId: "e2", data: { text: "b", n: 1 } }];
      const retry = await log.append("a", reordered, { expectedVersion: "no_stream" });
      expect(retry.duplicate).toBe(true);
      expect(retry.events.map((event) => [event.eventId, event.version, event.globalPosition])).toEqual([["e1", 1, 2], ["e2", 2, 3]]);
      expect(retry.events).toEqual(original.events);
      expect(retry).toMatchObject({ nextExpectedVersion: 2, lastGlobalPosition: 3 });
      expect(await log.headPosition()).toBe(4);
      expect(await log.readAll()).toHaveLength(4);
    });

    it("throws EventIdReusedError for a known eventId with another payload, stream, order or in a mixed batch, writing nothing", async () => {
      const log = await fresh();
      await log.append("a", [note("a", { eventId: "e1" }), note("b", { eventId: "e2" })]);
      await expect(log.append("a", [note("changed", { eventId: "e1" }), note("b", { eventId: "e2" })])).rejects.toThrow(EventIdReusedError);
      await expect(log.append("a", [note("a", { eventId: "e1", metadata: { runId: "x" } }), note("b", { eventId: "e2" })])).rejects.toThrow(
        EventIdReusedError,
      );
      await expect(log.append("b", [note("a", { eventId: "e1" })])).rejects.toThrow(/different payload/);
      await expect(log.append("a", [note("b", { eventId: "e2" }), note("a", { eventId: "e1" })])).rejects.toThrow(EventIdReusedError);
      await expect(log.append("a", [note("a", { eventId: "e1" }), note("b", { eventId: "e2" }), note("c", { eventId: "e3" })])).rejects.toThrow(
        /already in the log/,
      );
      await expect(log.append("a", [note("new", { eventId: "e9" }), note("a", { eventId: "e1" })])).rejects.toMatchObject({
        code: "EVENT_ID_REUSED",
      });
      expect(await log.headPosition()).toBe(2);
      expect(await log.streamVersion("b")).toBe(0);
    });

    it("reads a stream forwards and backwards from a version with a limit", async () => {
      const log = await fresh();
      await log.append("a", notes(5));
      await log.append("b", notes(2));
      const versions = (events: StoredEvent[]) => events.map((event) => event.version);
      expect(versions(await log.readStream("a"))).toEqual([1, 2, 3, 4, 5]);
      expect(versions(await log.readStream("a", { fromVersion: 3 }))).toEqual([3, 4, 5]);
      expect(versions(await log.readStream("a", { fromVersion: 2, limit: 2 }))).toEqual([2, 3]);
      expect(versions(await log.readStream("a", { direction: "backwards" }))).toEqual([5, 4, 3, 2, 1]);
      expect(versions(await log.readStream("a", { direction: "backwards", fromVersion: 3, limit: 2 }))).toEqual([3, 2]);
      expect(versions(await log.readStream("a", { direction: "backwards", fromVersion: 99, limit: 1 }))).toEqual([5]);
      expect(versions(await log.readStream("a", { fromVersion: 9 }))).toEqual([]);
      expect(versions(await log.readStream("a", { limit: 0 }))).toEqual([]);
      expect(await log.readStream("missing")).toEqual([]);
    });

    it("reads the whole log from a position, with a limit and a type filter", async () => {
      const log = await fresh();
      await log.append("a", [note("1"), { type: "note.removed", data: { n: 1 } }, note("2")]);
      await log.append("b", [{ type: "note.removed", data: { n: 2 } }, note("3")]);
      const positions = (events: StoredEvent[]) => events.map((event) => event.globalPosition);
      expect(positions(await log.readAll({ fromPosition: 2 }))).toEqual([3, 4, 5]);
      expect(positions(await log.readAll({ fromPosition: 1, limit: 2 }))).toEqual([2, 3]);
      expect(positions(await log.readAll({ types: ["note.removed"] }))).toEqual([2, 4]);
      expect(positions(await log.readAll({ types: ["note.removed", "note.added"], fromPosition: 3, limit: 1 }))).toEqual([4]);
      expect(await log.readAll({ types: [] })).toEqual([]);
      expect(await log.readAll({ fromPosition: 5 })).toEqual([]);
    });

    it("lists streams in creation order with their versions and times", async () => {
      const log = await fresh();
      await log.append("z", notes(1));
      await log.append("a", notes(2));
      await log.append("z", notes(2));
      const streams = await log.listStreams();
      expect(streams.map(({ streamId, version }) => [streamId, version])).toEqual([["z", 3], ["a", 2]]);
      for (const stream of streams) expect(Date.parse(stream.updatedAt)).toBeGreaterThanOrEqual(Date.parse(stream.createdAt));
    });

    it("deletes a stream physically, never reusing its positions", async () => {
      const log = await fresh();
      await log.append("a", notes(3));
      await log.append("b", notes(1));
      await log.append("a", [note("last", { eventId: "a-last" })]);
      expect(await log.deleteStream("a")).toBe(4);
      expect(await log.deleteStream("a")).toBe(0);
      expect(await log.readStream("a")).toEqual([]);
      expect(await log.streamVersion("a")).toBe(0);
      expect((await log.readAll()).map((event) => event.streamId)).toEqual(["b"]);
      expect((await log.listStreams()).map((stream) => stream.streamId)).toEqual(["b"]);
      // A writer that read the stream before the delete is told the stream is gone, not that another writer was first.
      const late = await log.append("a", [note("late")], { expectedVersion: 4 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(late).toMatchObject({ code: "EXPECTED_VERSION_CONFLICT", actualVersion: 0 });
      expect((late as Error).message).toMatch(/"a" does not exist.*deleted after it was read/);
      const again = await log.append("a", [note("new", { eventId: "a-last" })], { expectedVersion: "no_stream" });
      expect(again).toMatchObject({ duplicate: false, nextExpectedVersion: 1 });
      expect(again.events[0].globalPosition).toBe(6);
    });

    it("returns copies: mutating what was read does not change the log", async () => {
      const log = await fresh();
      await log.append("a", [note("x", { metadata: { runId: "r" } })]);
      const [event] = await log.readStream("a");
      const read: unknown = event.data;
      if (typeof read === "object" && read !== null) Reflect.set(read, "text", "mutated");
      event.metadata.runId = "mutated";
      expect((await log.readStream("a"))[0]).toMatchObject({ data: { text: "x" }, metadata: { runId: "r" } });
    });

    it("group-commits same-tick appends in call order; a conflicting one fails alone", async () => {
      const log = await fresh();
      const results = await Promise.allSettled([
        log.append("a", notes(2, "first"), { expectedVersion: "no_stream" }),
        log.append("b", notes(1, "other"), { expectedVersion: "no_stream" }),
        log.append("a", notes(1, "stale"), { expectedVersion: 0 }),
        log.append("a", notes(1, "second"), { expectedVersion: 2 }),
        log.append("a", [{ type: "note.added", data: { text: 1 } }]),
        log.append("a", notes(1, "third"), { expectedVersion: "stream_exists" }),
      ]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
      expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(ExpectedVersionConflictError);
      expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ actualVersion: 2 });
      expect((results[4] as PromiseRejectedResult).reason).toBeInstanceOf(EventSchemaError);
      const all = await log.readAll();
      expect(all.map((event) => `${event.streamId}${event.version}@${event.globalPosition}:${textOf(event)}`)).toEqual([
        "a1@1:first0",
        "a2@2:first1",
        "b1@3:other0",
        "a3@4:second0",
        "a4@5:third0",
      ]);
    });

    it("subscribes catch-up then live with no gap and no duplicate under concurrent appends", async () => {
      const log = await fresh();
      for (let index = 0; index < 10; index++) await log.append(`s${index % 3}`, notes(5, `pre${index}-`));
      const total = 50 + 300;
      const received = collect(log.subscribe(), total);
      const writers = [0, 1, 2].map(async (writer) => {
        for (let round = 0; round < 20; round++) {
          const same = [log.append(`w${writer}`, notes(2, `r${round}a`)), log.append(`x${writer}`, notes(1, `r${round}b`))];
          await Promise.all(same);
          await log.append(`w${writer}`, notes(2, `r${round}c`));
        }
      });
      await Promise.all(writers);
      const events = await received;
      expect(events.map((event) => event.globalPosition)).toEqual(Array.from({ length: total }, (_, index) => index + 1));
      expect(new Set(events.map((event) => event.eventId)).size).toBe(total);
      expect(events).toEqual(await log.readAll());
    });

    it("pages a long catch-up and then goes live without gap or duplicate", async () => {
      const log = await fresh();
      for (let batch = 0; batch < 13; batch++) await log.append(`s${batch % 2}`, notes(100, `b${batch}-`));
      const received = collect(log.subscribe({ fromPosition: 100 }), 1200 + 30);
      for (let index = 0; index < 30; index++) void log.append("live", notes(1, `l${index}-`));
      const events = await received;
      expect(events.map((event) => event.globalPosition)).toEqual(Array.from({ length: 1230 }, (_, index) => index + 101));
    });

    it("lets a subscriber append in reaction to what it receives (a reactor) without losing events", async () => {
      const log = await fresh();
      const reactions = log.subscribe({ types: ["note.added"] }).subscribe((event) => {
        void log.append("reactions", [{ type: "note.removed", data: { n: event.globalPosition } }]);
      });
      const all = collect(log.subscribe(), 20);
      for (let index = 0; index < 10; index++) await log.append("source", notes(1, `${index}-`));
      const events = await all;
      reactions.unsubscribe();
      expect(events.map((event) => event.globalPosition)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
      const reacted = events.filter((event) => event.type === "note.removed").map((event) => NoteRemoved.parse(event.data).n);
      const sources = events.filter((event) => event.type === "note.added").map((event) => event.globalPosition);
      expect(reacted.sort((left, right) => left - right)).toEqual(sources);
    });

    it("subscribes to one stream from a version, and to types from a position", async () => {
      const log = await fresh();
      await log.append("a", notes(3));
      await log.append("b", [{ type: "note.removed", data: { n: 1 } }]);
      const streamEvents = collect(log.subscribe({ streamId: "a", fromVersion: 2 }), 3);
      const typed = collect(log.subscribe({ types: ["note.removed"], fromPosition: 1 }), 2);
      await log.append("b", notes(1));
      await log.append("a", notes(2, "live"));
      await log.append("c", [{ type: "note.removed", data: { n: 2 } }]);
      expect((await streamEvents).map((event) => [event.streamId, event.version])).toEqual([["a", 3], ["a", 4], ["a", 5]]);
      expect((await typed).map((event) => event.globalPosition)).toEqual([4, 8]);
    });

    it("keeps a stream subscription going across a delete and re-creation of the stream", async () => {
      const log = await fresh();
      await log.append("a", notes(3, "old"));
      const received = collect(log.subscribe({ streamId: "a" }), 5);
      await log.append("b", notes(1));
      await log.deleteStream("a");
      await log.append("a", notes(2, "new"), { expectedVersion: "no_stream" });
      const events = await received;
      expect(events.map((event) => [event.version, textOf(event)])).toEqual([
        [1, "old0"],
        [2, "old1"],
        [3, "old2"],
        [1, "new0"],
        [2, "new1"],
      ]);
    });

    it("stops delivering after unsubscribe and completes subscriptions on close", async () => {
      const log = await factory(testRegistry());
      await log.append("a", notes(1));
      const seen: number[] = [];
      const subscription = log.subscribe().subscribe((event) => seen.push(event.globalPosition));
      // SQLite and memory deliver the first page inside subscribe(); PostgreSQL after its first read.
      await until(() => seen.length > 0, 10_000);
      expect(seen).toEqual([1]);
      subscription.unsubscribe();
      await log.append("a", notes(1));
      let completed = false;
      log.subscribe({ fromPosition: 2 }).subscribe({ complete: () => (completed = true) });
      await log.close();
      expect(seen).toEqual([1]);
      expect(completed).toBe(true);
      await expect(log.append("a", notes(1))).rejects.toThrow(LogClosedError);
      await expect(log.readAll()).rejects.toThrow(LogClosedError);
      await log.close();
    });
  });
}
