/**
 * Type tests of `createHarness`: the `model` option must name a key of `models`, checked at
 * compile time for a literal registry (tsc over test/ fails if a `@ts-expect-error` stops
 * erroring) and at run time for any registry (HarnessConfigError).
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { type AgentHarnessOptions, createHarness, createMemoryEventLog, HarnessConfigError } from "../../src/index.ts";
import { scriptedModel } from "../../src/testing/index.ts";

describe("createHarness's model option", () => {
  it("accepts a key of models, and runs on it", async () => {
    const harness = await createHarness({
      models: { main: scriptedModel([{ text: "from main" }]), fast: scriptedModel([{ text: "from fast" }]) },
      model: "fast",
      eventLog: createMemoryEventLog(),
    });
    await harness.prompt("hi");
    expect(harness.getState().modelName).toBe("fast");
    await harness.close();
  });

  it("refuses a name that is not a key of models: at compile time, and at run time", async () => {
    const options = {
      models: { main: scriptedModel([{ text: "x" }]) },
      // @ts-expect-error "mian" is not a key of models.
      model: "mian",
      eventLog: createMemoryEventLog(),
    } satisfies AgentHarnessOptions<"main">;
    const refused = await createHarness(options as AgentHarnessOptions).catch((error: unknown) => error);
    expect(HarnessConfigError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/"mian" is not in models \(main\)/);
    // Inline, as users write it:
    // @ts-expect-error "mian" is not a key of models.
    const inline = () => createHarness({ models: { main: scriptedModel([]) }, model: "mian" });
    expectTypeOf(inline).returns.resolves.not.toBeAny();
  });

  it("keeps accepting any name when the registry's keys are not known until run time", () => {
    const models: Record<string, ReturnType<typeof scriptedModel>> = { main: scriptedModel([]) };
    expectTypeOf(createHarness<string>).parameter(0).toHaveProperty("model").toEqualTypeOf<string | undefined>();
    const later = () => createHarness({ models, model: "any-name" });
    expectTypeOf(later).returns.resolves.not.toBeAny();
  });
});
