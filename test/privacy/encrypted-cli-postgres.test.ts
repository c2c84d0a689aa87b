/**
 * The CLI on an encrypted PostgreSQL log without `ARBOR_ENCRYPTION_KEY`: a run, an import or an
 * `arbor rm` is refused with an error naming the variable, exits non-zero, and writes nothing (no
 * session content in clear beside the sealed sessions, no delete that would leave the deleted
 * session's key behind). \`arbor serve\` and \`arbor worker\` without the key, or with another key,
 * refuse at start (before they listen or claim anything) with an error naming the variable. The
 * real CLI process, the real PostgreSQL, a loopback model server.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIServer, textResponse, type OpenAIServer } from "../../src/testing/index.ts";
import { runArbor, serveArbor, startArbor, tempDir, type CliResult } from "../cli/cli-helpers.ts";
import { PG_URL, testClient, useTestSchemas } from "../store/pg-test-db.ts";

const newSchema = useTestSchemas("enccli");

describe("the CLI on an encrypted PostgreSQL log without its key", { timeout: 120_000 }, () => {
  let server: OpenAIServer;
  beforeAll(async () => {
    server = await startOpenAIServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses run, import and rm, naming ARBOR_ENCRYPTION_KEY, and writes nothing", async () => {
    const schema = newSchema();
    const dir = tempDir("arbor-enccli-");
    const keyed = { OPENAI_API_KEY: "test-key", ARBOR_DB_SCHEMA: schema, ARBOR_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    const keyless = { OPENAI_API_KEY: "test-key", ARBOR_DB_SCHEMA: schema, ARBOR_ENCRYPTION_KEY: "" };
    server.script(textResponse("SEALED-REPLY"));
    const sealed = await runArbor(["--db", PG_URL, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "a sealed session"], { env: keyed });
    expect(sealed.code, sealed.stderr).toBe(0);
    const sessionId = /session (\S+)/.exec(sealed.stderr)![1];

    const client = await testClient();
    try {
      const count = async () => (await client.query(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0].n as number;
      const before = await count();
      const marker = `PLAIN-PG-${randomBytes(6).toString("hex")}`;
      server.script(textResponse(`reply ${marker}`));
      const plainRun = await runArbor(["--db", PG_URL, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, marker], { env: keyless });
      expect(plainRun.code).not.toBe(0);
      expect(plainRun.stderr).toContain("ARBOR_ENCRYPTION_KEY");
      const file = join(dir, "import.jsonl");
      writeFileSync(
        file,
        [
          JSON.stringify({ type: "session", id: "imported-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: dir }),
          JSON.stringify({ type: "message", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text: marker }], timestamp: 1767225601000 } }),
        ].join("\n") + "\n",
      );
      const plainImport = await runArbor(["--db", PG_URL, "import", file], { env: keyless });
      expect(plainImport.code).not.toBe(0);
      expect(plainImport.stderr).toContain("ARBOR_ENCRYPTION_KEY");
      const plainRm = await runArbor(["--db", PG_URL, "rm", sessionId], { env: keyless });
      expect(plainRm.code).not.toBe(0);
      expect(plainRm.stderr).toContain("ARBOR_ENCRYPTION_KEY");

      expect(await count()).toBe(before);
      const leaked = await client.query(`SELECT count(*)::int AS n FROM "${schema}".events WHERE data::text LIKE $1`, [`%${marker}%`]);
      expect(leaked.rows[0].n).toBe(0);
      const key = await client.query(`SELECT count(*)::int AS n FROM "${schema}_keys".data_keys WHERE key_id = $1`, [sessionId]);
      expect(key.rows[0].n).toBe(1);
      // With the key, the sealed session is still there and readable.
      const listed = await runArbor(["--db", PG_URL, "sessions", "--json"], { env: keyed });
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((row) => row.id)).toEqual([sessionId]);
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
      await client.end();
    }
  });

  /** Starts a long-running command; resolves with its exit, or kills it and says it started (it printed its start-up line). */
  async function startOrExit(start: { ready: Promise<string>; exited: Promise<CliResult>; child: () => import("node:child_process").ChildProcess }): Promise<CliResult | "started"> {
    const outcome = await Promise.race([start.exited, start.ready.then(() => "started" as const)]);
    if (outcome === "started") {
      start.child().kill("SIGKILL");
      await start.exited;
    }
    return outcome;
  }

  it("arbor serve without the key on a store whose key table holds no data key says so, and how to use the log without encryption", async () => {
    const schema = newSchema();
    const dir = tempDir("arbor-enccli-empty-");
    const keyed = { OPENAI_API_KEY: "test-key", ARBOR_DB_SCHEMA: schema, ARBOR_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    server.script(textResponse("SEALED-REPLY"));
    const sealed = await runArbor(["--db", PG_URL, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "a sealed session"], { env: keyed });
    expect(sealed.code, sealed.stderr).toBe(0);
    const sessionId = /session (\S+)/.exec(sealed.stderr)![1];
    const removed = await runArbor(["--db", PG_URL, "rm", "--yes", sessionId], { env: keyed });
    expect(removed.code, removed.stderr).toBe(0);
    const client = await testClient();
    try {
      const flags = ["--db", PG_URL, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", server.url, "--port", "0"];
      const serve = (await startOrExit(serveArbor(flags, { ...keyed, ARBOR_ENCRYPTION_KEY: "" }))) as CliResult;
      expect(serve.code, serve.stderr).toBe(2);
      expect(serve.stderr).toContain(`has a key table ("${schema}_keys".data_keys) that holds no data key`);
      expect(serve.stderr).toContain(`drop the schema "${schema}_keys"`);
      expect(serve.stderr).not.toContain("is an encrypted store");
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
      await client.end();
    }
  });

  it("arbor serve and arbor worker refuse at start without the key, or with another key, naming ARBOR_ENCRYPTION_KEY", async () => {
    const schema = newSchema();
    const dir = tempDir("arbor-enccli-serve-");
    const key = randomBytes(32).toString("base64");
    const base = { OPENAI_API_KEY: "test-key", ARBOR_DB_SCHEMA: schema };
    server.script(textResponse("SEALED-REPLY"));
    const sealed = await runArbor(["--db", PG_URL, "run", "--base-url", server.url, "--model", "openai:gpt-test", "--cwd", dir, "a sealed session"], { env: { ...base, ARBOR_ENCRYPTION_KEY: key } });
    expect(sealed.code, sealed.stderr).toBe(0);
    const flags = ["--db", PG_URL, "--cwd", dir, "--model", "openai:gpt-test", "--base-url", server.url];
    const client = await testClient();
    try {
      const count = async () => (await client.query(`SELECT (SELECT count(*) FROM "${schema}".events)::int AS events, (SELECT count(*) FROM "${schema}_keys".data_keys)::int AS keys`)).rows[0] as object;
      const before = await count();
      for (const [name, env] of [
        ["without a key", { ...base, ARBOR_ENCRYPTION_KEY: "" }],
        ["with another key", { ...base, ARBOR_ENCRYPTION_KEY: randomBytes(32).toString("base64") }],
      ] as const) {
        const serve = await startOrExit(serveArbor([...flags, "--port", "0"], env));
        expect(serve, `serve ${name}`).not.toBe("started");
        const served = serve as CliResult;
        expect(served.code, served.stderr).toBe(2);
        expect(served.stderr).toContain("ARBOR_ENCRYPTION_KEY");
        expect(served.stderr).toMatch(name === "without a key" ? /is an encrypted store \(its key table "[^"]+_keys"\.data_keys exists\)/ : /was written with another master key/);
        const worker = await startOrExit(startArbor(["worker", ...flags], env, /arbor worker: .*\n/));
        expect(worker, `worker ${name}`).not.toBe("started");
        expect((worker as CliResult).code, (worker as CliResult).stderr).toBe(2);
        expect((worker as CliResult).stderr).toContain("ARBOR_ENCRYPTION_KEY");
      }
      expect(await count()).toEqual(before);
      // With its key, the store serves.
      expect(await startOrExit(serveArbor([...flags, "--port", "0"], { ...base, ARBOR_ENCRYPTION_KEY: key }))).toBe("started");
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}_keys" CASCADE`);
      await client.end();
    }
  });
});
