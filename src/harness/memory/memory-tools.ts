/**
 * The model's memory tools (opt-in, the harness option `memory.tools`): `memory_read`, `memory_write`, `memory_search` over `session.memory`. Each
 * answers with JSON text; a bad key or value is an error result naming it (the model can retry). They go through approval like any tool
 * (`requireApproval: ["memory_write"]`).
 */
import { z } from "zod";
import { defineTool, type AgentTool } from "../../core/tools.ts";
import type { SessionMemory } from "./session-memory.ts";

const text = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });

/** The three memory tools over `memory`; `principal: true` lets the model pick the principal scope. */
export function createMemoryTools(memory: SessionMemory, options: { principal: boolean }): AgentTool<any, any, any>[] {
  const scopeField = z.enum(["session", "principal"]).optional().describe("session (default) or principal: shared by your user's sessions");
  // Without a principal the model is not offered the scope (a value it sends anyway is refused by the memory).
  const scope = { scope: options.principal ? scopeField : scopeField.describe("leave out") };
  return [
    defineTool({
      name: "memory_read",
      description: "Read a value you stored in memory under a key (null when there is none).",
      parameters: z.object({ key: z.string().describe("the key, e.g. user.preferences"), ...scope }),
      execute: async (args) => text({ key: args.key, value: (await memory.read(args.key, { scope: args.scope })) ?? null }),
    }),
    defineTool({
      name: "memory_write",
      description: "Store a JSON value in memory under a key (letters, digits, _ . - :), replacing any value there.",
      parameters: z.object({ key: z.string(), value: z.json(), ...scope }),
      execute: async (args) => {
        await memory.write(args.key, args.value, { scope: args.scope });
        return text({ written: args.key });
      },
    }),
    defineTool({
      name: "memory_search",
      description: "Search your memory's keys and values by words; best matches first.",
      parameters: z.object({ query: z.string(), limit: z.number().int().min(1).max(50).optional(), ...scope }),
      execute: async (args) =>
        text((await memory.search(args.query, { limit: args.limit ?? 10, scope: args.scope })).map((hit) => ({ key: hit.key, value: hit.value }))),
    }),
  ];
}
