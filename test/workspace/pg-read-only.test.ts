/**
 * Reading workspace blobs and session memory through a read-only PostgreSQL log never creates
 * their tables (a read-only log writes nothing); a schema without them reads as empty.
 */
import { describe, expect, it } from "vitest";
import { createPostgresEventLog } from "../../src/store/postgres/pg-event-log.ts";
import { createSessionRepository } from "../../src/store/session-repository.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const schemas = useTestSchemas("wsro");

describe("workspace and memory tables on a read-only PostgreSQL log", () => {
  it("reads find nothing and create nothing", async () => {
    const schema = schemas();
    const writable = createPostgresEventLog({ connectionString: PG_URL, schema });
    const session = await createSessionRepository({ log: writable }).create({ cwd: "/w" });
    await writable.close();
    const log = createPostgresEventLog({ connectionString: PG_URL, schema, readOnly: true });
    try {
      expect(await log.workspaceBlobs!.list("default")).toEqual([]);
      expect(await log.workspaceBlobs!.has("default", ["0".repeat(64)])).toEqual(new Set());
      expect(await log.memoryIndex!.list("default", `session-${session.id}`)).toEqual([]);
      expect(await log.memoryIndex!.search("default", `session-${session.id}`, "x", 5)).toEqual([]);
      expect(await log.memoryIndex!.head("default", `session-${session.id}`)).toBe(0);
      await expect(log.workspaceBlobs!.put("default", [{ hash: "0".repeat(64), data: Buffer.from("x") }])).rejects.toThrow(/read-only/);
      await expect(log.memoryIndex!.apply("default", "s", [{ version: 1, key: "k", value: 1 }], 1)).rejects.toThrow(/read-only/);
    } finally {
      await log.close();
    }
    const client = await testClient();
    try {
      const { rows } = await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('workspace_blobs', 'memory_entries', 'memory_heads')", [schema]);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
