/**
 * The shape of a workflow definition (every step's id, kind, place and run-changing settings), its digest (`sha256-2:` over the shape's JSON;
 * functions excluded) and what changed between two shapes, in words. `workflow.started` records them, and a resume whose definition changed is
 * refused. {@link digestMatches} also reads the older form `sha256:` (ids, kinds, places only).
 */
import { createHash } from "node:crypto";
import type { WorkflowStep } from "./steps.ts";

/** One step of a definition's shape (see the module contract). */
export interface StepShape {
  id: string;
  kind: WorkflowStep["kind"];
  /** The fan-out (its id) or branch case (`<id>:<case>`) the step is in; absent at the top level. */
  in?: string;
  /** A fan-out's mode (default written out: `all`). Absent in shapes logged before v3. */
  mode?: "all" | "failFast";
  /** An approval step's `onDeny` (default written out: `fail`). Absent in shapes logged before v3. */
  onDeny?: "fail" | "continue";
  /** An agent, code or artifact step's `retry` (default written out: `never`). Absent in shapes logged before v3. */
  retry?: "safe" | "never";
}

function settingsOf(step: WorkflowStep): Pick<StepShape, "mode" | "onDeny" | "retry"> {
  if (step.kind === "fanOut") return { mode: step.mode ?? "all" };
  if (step.kind === "approval") return { onDeny: step.onDeny ?? "fail" };
  if (step.kind === "branch") return {};
  return { retry: step.retry ?? "never" };
}

/** The shape of `steps` (see the module contract). */
export function definitionShape(steps: readonly WorkflowStep[], place?: string): StepShape[] {
  return steps.flatMap((step): StepShape[] => {
    const self: StepShape = { id: step.id, kind: step.kind, ...(place !== undefined ? { in: place } : {}), ...settingsOf(step) };
    if (step.kind === "fanOut") return [self, ...definitionShape(step.steps, step.id)];
    if (step.kind === "branch") {
      const cases = Object.entries(step.cases).flatMap(([name, list]) => definitionShape(list, `${step.id}:${name}`));
      return [self, ...cases, ...definitionShape(step.otherwise ?? [], `${step.id}:otherwise`)];
    }
    return [self];
  });
}

const sha256 = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/** The digest of a shape, form 2 (see the module contract). */
export function definitionDigest(shape: readonly StepShape[]): string {
  return `sha256-2:${sha256(shape.map((step) => [step.id, step.kind, step.in ?? null, step.mode ?? null, step.onDeny ?? null, step.retry ?? null]))}`;
}

/** Form 1 (`workflow.started` v2): ids, kinds and places. */
function definitionDigestForm1(shape: readonly StepShape[]): string {
  return `sha256:${sha256(shape.map((step) => [step.id, step.kind, step.in ?? null]))}`;
}

/** True when `stored` (a logged digest, form 1 or 2) is the digest of `shape` in that form (see the module contract). */
export function digestMatches(stored: string, shape: readonly StepShape[]): boolean {
  return stored === (stored.startsWith("sha256:") ? definitionDigestForm1(shape) : definitionDigest(shape));
}

const article = (kind: string) => (/^[aeiou]/i.test(kind) ? "an" : "a");
const place = (where: string | undefined) => (where === undefined ? "the top level" : where.includes(":") ? `case "${where}"` : `fan-out "${where}"`);

/** The differences from `stored` to `current`, in words (see the module contract). `stored` may be bare step ids (a v1 `workflow.started`). */
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
    for (const setting of ["mode", "onDeny", "retry"] as const) {
      if (old.kind === step.kind && old[setting] !== undefined && old[setting] !== step[setting]) changes.push(`step "${step.id}" ${setting} was "${old[setting]}", is now "${step[setting]}"`);
    }
  }
  const keptBefore = before.map((step) => step.id).filter((id) => now.has(id));
  const keptNow = current.map((step) => step.id).filter((id) => was.has(id));
  if (keptBefore.join("\n") !== keptNow.join("\n")) changes.push(`the steps' order changed: was ${keptBefore.join(", ")}; is now ${keptNow.join(", ")}`);
  return changes;
}
