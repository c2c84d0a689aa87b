/**
 * `createHarness({ inspect: [...] })`: several inspection observers at once. The local Stately
 * inspector (a real WebSocket server, read with `ws`) and the machine-states recorder both see
 * the same session's actors; the single form still works; a bad element is refused by name.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { HarnessConfigError } from "../../src/core/errors.ts";
import { createHarness, type AgentHarness } from "../../src/harness/create-harness.ts";
import { createArborInspector, type ArborInspector } from "../../src/machines/inspect.ts";
import { createMachineStates } from "../../src/machines/machine-states.ts";
import { scriptedModel } from "../../src/testing/scripted-model.ts";
import { freePort } from "../free-port.ts";


/** The records the Stately server relays (it replays its buffer to a new client), once `enough` holds. */
function statelyRecords(port: number, enough: (raw: string[]) => boolean): Promise<string[]> {
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  const raw: string[] = [];
  return new Promise<string[]>((resolve, reject) => {
    client.on("error", reject);
    client.on("message", (data) => {
      raw.push(String(data));
      if (enough(raw)) {
        client.close();
        resolve(raw);
      }
    });
  });
}

let harness: AgentHarness | undefined;
let inspector: ArborInspector | undefined;
let dir: string | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  inspector?.stop();
  inspector = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const harnessWith = (inspect: unknown) => {
  dir = mkdtempSync(join(tmpdir(), "arbor-inspect-"));
  return createHarness({ eventLogPath: join(dir, "arbor.db"), cwd: dir, models: { m: scriptedModel([{ text: "SECRET-REPLY" }, { text: "two" }]) }, inspect });
};

describe("createHarness inspect: several observers", () => {
  it("the Stately inspector, the machine-states recorder and a plain function all see the session's actors", async () => {
    const port = await freePort();
    inspector = createArborInspector({ port });
    await inspector.ready;
    const machines = createMachineStates();
    const seen: string[] = [];
    harness = await harnessWith([inspector.inspect, machines, (event: { type: string }) => seen.push(event.type)]);
    const outcome = await harness.prompt("SECRET-PROMPT");
    expect(outcome.status).toBe("done");
    const id = harness.getState().sessionId;

    // The recorder got this session's agent and run, the run ending done.
    const records = machines.current(id);
    expect(records.map((record) => record.machine)).toEqual(expect.arrayContaining(["agent", "run"]));
    expect(records.find((record) => record.machine === "run")).toMatchObject({ sessionId: id, state: "done", status: "done" });
    // The function observer saw the same kinds of events XState reports.
    expect(seen).toEqual(expect.arrayContaining(["@xstate.actor", "@xstate.event", "@xstate.snapshot"]));
    // The Stately server relayed snapshots of the run, content redacted.
    const raw = await statelyRecords(port, (all) => all.some((record) => record.includes('"@xstate.snapshot"') && record.includes('"done"')));
    const all = raw.join("\n");
    expect(all).toContain('"@xstate.snapshot"');
    expect(all).not.toContain("SECRET-PROMPT");
    expect(all).not.toContain("SECRET-REPLY");
  });

  it("a single recorder still works alone, and an empty array means no inspection", async () => {
    const machines = createMachineStates();
    harness = await harnessWith(machines);
    await harness.prompt("hi");
    expect(machines.current(harness.getState().sessionId).some((record) => record.machine === "run" && record.status === "done")).toBe(true);
    await harness.close();
    harness = await harnessWith([]);
    expect((await harness.prompt("hi")).status).toBe("done");
  });

  it("an observer that throws is dropped with a warning; the others and the run go on", async () => {
    const machines = createMachineStates();
    let calls = 0;
    const throwing = () => {
      calls += 1;
      throw new Error("observer failed");
    };
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      harness = await harnessWith([throwing, machines]);
      expect((await harness.prompt("hi")).status).toBe("done");
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(calls).toBe(1);
    expect(warnings.map((warning) => warning.message)).toEqual([expect.stringMatching(/^inspect\[0\] threw and was dropped for session .+: observer failed$/)]);
    expect(machines.current(harness.getState().sessionId).find((record) => record.machine === "run")).toMatchObject({ state: "done" });
  });

  it("refuses an element that is no observer with HarnessConfigError naming inspect", async () => {
    const refused = await harnessWith([createMachineStates(), 42]).catch((error: unknown) => error);
    expect(HarnessConfigError.isInstance(refused)).toBe(true);
    expect(String((refused as Error).message)).toMatch(/inspect/);
  });
});
