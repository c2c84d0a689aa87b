/**
 * Workflow lifecycle events (`src/workflows/`), logged in the workflow's own stream
 * `workflow-<id>` (not a session stream).
 *
 * Contract (ours; purista's run and step records, in the lifecycle grammar of
 * `docs/events.md`):
 * - `workflow.started` is the stream's first event (the validated input, and since v2 the
 *   definition's shape and digest, `src/workflows/definition-digest.ts`: a resume compares them
 *   with the definition it is given; since v3 each step's shape also holds its settings `mode`,
 *   `onDeny`, `retry` and the digest is form 2 (`sha256-2:`), which covers them; v1 events read as
 *   v3 without `definition`, v2 events as v3 with a form-1 digest and no settings); `workflow.ended` its
 *   one terminal event (`done` with the validated output, `failed` with `code` and `error`,
 *   `aborted` with `reason?`); a workflow waiting for a human decision has neither ended nor
 *   failed: its gate's `approval.requested` (source `workflow`) has no `approval.ended` yet;
 * - every step logs `step.started` before it does anything (its `attempt`, from 1) and
 *   `step.ended` with its result: `done` (`output`, the logged result a resume uses instead
 *   of running the step again), `failed` (`code`, `error`), `aborted`, or `interrupted` (a
 *   crash cut the attempt off and the step was not declared safe to retry);
 * - an agent step logs `step.updated { sessionId }` once its agent's session exists and before
 *   the agent runs in it, so a resume continues in that session; artifact steps log the
 *   written file in `output` (`path`, `bytes`, `sha256`);
 * - `input`, `output` and `error` are content; the audit stream keeps ids, names and statuses.
 *
 * @example
 * ```ts
 * for (const event of await log.readStream(workflowStreamId(id))) if (isEventOfType(event, "step.ended")) console.log(event.data.stepId, event.data.status);
 * ```
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
   * v2: the definition's shape (every step's id, kind and place, in order) and its digest; v3:
   * each step's settings too (`mode`, `onDeny`, `retry`; absent in v2 events) and a form-2 digest.
   * Absent in v1 events.
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
