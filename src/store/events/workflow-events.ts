/**
 * Workflow lifecycle events (`src/workflows/`; ours, after purista's run and step records), in the workflow's own stream `workflow-<id>`.
 * `workflow.started` opens it (input, and the definition's shape and digest a resume compares, `definition-digest.ts`; v1 and v2 read as v3) and
 * `workflow.ended` is its one terminal (`done`, `failed`, `aborted`); a workflow waiting at a gate has an `approval.requested` without an end. Each
 * step logs `step.started` before anything and `step.ended` with `done` (the `output` a resume reuses), `failed`, `aborted` or `interrupted`; an
 * agent step logs `step.updated { sessionId }` before its agent runs. `input`, `output` and `error` are content.
 */
import { z } from "zod";

const common = {
  workflowId: z.string().min(1),
  /** The workflow's name (`defineWorkflow({ name })`). */
  workflow: z.string().min(1),
};
const stepCommon = {
  workflowId: z.string().min(1),
  stepId: z.string().min(1),
  /** `agent`, `code`, `fanOut`, `branch`, `approval`, `artifact`. */
  kind: z.enum(["agent", "code", "fanOut", "branch", "approval", "artifact"]),
  attempt: z.number().int().positive(),
};

export const workflowStartedSchema = z.object({
  ...common,
  /** The validated input. */
  input: z.unknown(),
  /** The ids of every step, in definition order (nested steps included). */
  steps: z.array(z.string()),
  /**
   * v2: the definition's shape (every step's id, kind and place, in order) and its digest; v3: each step's settings too (`mode`, `onDeny`, `retry`;
   * absent in v2 events) and a form-2 digest. Absent in v1 events.
   */
  definition: z
    .object({
      digest: z.string().min(1),
      steps: z.array(
        z.object({
          id: z.string(),
          kind: z.enum(["agent", "code", "fanOut", "branch", "approval", "artifact"]),
          in: z.string().optional(),
          mode: z.enum(["all", "failFast"]).optional(),
          onDeny: z.enum(["fail", "continue"]).optional(),
          retry: z.enum(["safe", "never"]).optional(),
        }),
      ),
    })
    .optional(),
});

export const workflowEndedSchema = z.discriminatedUnion("status", [
  z.object({ ...common, status: z.literal("done"), output: z.unknown() }),
  z.object({ ...common, status: z.literal("failed"), code: z.string(), error: z.string(), stepId: z.string().optional() }),
  z.object({ ...common, status: z.literal("aborted"), reason: z.string().optional() }),
]);

export const stepStartedSchema = z.object({
  ...stepCommon,
  /** The step this one runs inside (a fan-out's branches). */
  parentStepId: z.string().optional(),
});

export const stepUpdatedSchema = z.object({
  ...stepCommon,
  /** The agent's own session (agent steps). */
  sessionId: z.string().min(1),
});

export const stepEndedSchema = z.discriminatedUnion("status", [
  z.object({ ...stepCommon, status: z.literal("done"), output: z.unknown(), sessionId: z.string().optional() }),
  z.object({ ...stepCommon, status: z.literal("failed"), code: z.string(), error: z.string(), sessionId: z.string().optional() }),
  z.object({ ...stepCommon, status: z.literal("aborted"), reason: z.string().optional(), sessionId: z.string().optional() }),
  z.object({ ...stepCommon, status: z.literal("interrupted"), reason: z.string(), sessionId: z.string().optional() }),
]);

/** Workflow event types with their current schema version and schema. */
export const WORKFLOW_EVENT_SCHEMAS = {
  "workflow.started": { version: 3, schema: workflowStartedSchema },
  "workflow.ended": { version: 1, schema: workflowEndedSchema },
  "step.started": { version: 1, schema: stepStartedSchema },
  "step.updated": { version: 1, schema: stepUpdatedSchema },
  "step.ended": { version: 1, schema: stepEndedSchema },
} as const;
