/**
 * The shape of a workflow definition, its digest, and what changed between two shapes (ours,
 * issue 13): `workflow.started` records them, and a resume of a run whose definition changed is
 * refused instead of replaying logged results into other steps.
 *
 * Contract:
 * - the shape is every step in definition order (nested ones included, as `flattenSteps` walks
 *   them): its `id`, its `kind`, and where it sits (`in`: a fan-out's id, or `<branch id>:<case>` /
 *   `<branch id>:otherwise`; absent at the top level);
 * - the digest is `sha256:` and the hex SHA-256 of the shape's JSON: two definitions with the same
 *   steps (ids, kinds, places, order) have the same digest; functions (prompts, code, conditions)
 *   are not part of it;
 * - {@link definitionChanges} names each difference in words: a removed step, a new step, a
 *   changed kind, a moved step, a changed order; empty when the shapes are equal. Given only step
 *   ids (a run logged before the digest existed, `workflow.started` v1), it compares ids and order.
 *
 * @example
 * ```ts
 * const shape = definitionShape(workflow.definition.steps);
 * const changes = definitionChanges(stored.steps, shape); // ['step "review" was a code step, is now an agent step']
 * ```
 */
import { createHash } from "node:crypto";
import type { WorkflowStep } from "./steps.ts";

/** One step of a definition's shape (see the module contract). */
export interface StepShape {
  id: string;
  kind: WorkflowStep["kind"];
  /** The fan-out (its id) or branch case (`<id>:<case>`) the step is in; absent at the top level. */
  in?: string;
}

/**
 * The shape of `steps` (see the module contract).
 *
 * @example
 * ```ts
 * definitionShape([codeStep({ id: "a", run: () => 1 })]); // [{ id: "a", kind: "code" }]
 * ```
 */
export function definitionShape(steps: readonly WorkflowStep[], place?: string): StepShape[] {
  return steps.flatMap((step): StepShape[] => {
    const self: StepShape = { id: step.id, kind: step.kind, ...(place !== undefined ? { in: place } : {}) };
    if (step.kind === "fanOut") return [self, ...definitionShape(step.steps, step.id)];
    if (step.kind === "branch") {
      const cases = Object.entries(step.cases).flatMap(([name, list]) => definitionShape(list, `${step.id}:${name}`));
      return [self, ...cases, ...definitionShape(step.otherwise ?? [], `${step.id}:otherwise`)];
    }
    return [self];
  });
}

/**
 * The digest of a shape (see the module contract).
 *
 * @example
 * ```ts
 * definitionDigest(definitionShape(steps)); // "sha256:9f2c…"
 * ```
 */
export function definitionDigest(shape: readonly StepShape[]): string {
  return `sha256:${createHash("sha256").update(JSON.stringify(shape.map((step) => [step.id, step.kind, step.in ?? null]))).digest("hex")}`;
}

const article = (kind: string) => (/^[aeiou]/i.test(kind) ? "an" : "a");
const place = (where: string | undefined) => (where === undefined ? "the top level" : where.includes(":") ? `case "${where}"` : `fan-out "${where}"`);

/**
 * The differences from `stored` to `current`, in words (see the module contract). `stored` may
 * be bare step ids (a v1 `workflow.started`).
 *
 * @example
 * ```ts
 * definitionChanges(["a", "b"], [{ id: "b", kind: "code" }, { id: "a", kind: "code" }]); // ["the steps' order changed: was a, b; is now b, a"]
 * ```
 */
export function definitionChanges(stored: readonly (StepShape | string)[], current: readonly StepShape[]): string[] {
  const before = stored.map((step) => (typeof step === "string" ? { id: step } : step)) as (Partial<StepShape> & { id: string })[];
  const was = new Map(before.map((step) => [step.id, step]));
  const now = new Map(current.map((step) => [step.id, step]));
  const changes: string[] = [];
  for (const step of before) if (!now.has(step.id)) changes.push(`step "${step.id}"${step.kind ? ` (${step.kind})` : ""} was removed`);
  for (const step of current) if (!was.has(step.id)) changes.push(`step "${step.id}" (${step.kind}) is new`);
  for (const step of current) {
    const old = was.get(step.id);
    if (!old || old.kind === undefined) continue;
    if (old.kind !== step.kind) changes.push(`step "${step.id}" was ${article(old.kind)} ${old.kind} step, is now ${article(step.kind)} ${step.kind} step`);
    if (old.in !== step.in) changes.push(`step "${step.id}" was in ${place(old.in)}, is now in ${place(step.in)}`);
  }
  const keptBefore = before.map((step) => step.id).filter((id) => now.has(id));
  const keptNow = current.map((step) => step.id).filter((id) => was.has(id));
  if (keptBefore.join("\n") !== keptNow.join("\n")) changes.push(`the steps' order changed: was ${keptBefore.join(", ")}; is now ${keptNow.join(", ")}`);
  return changes;
}
