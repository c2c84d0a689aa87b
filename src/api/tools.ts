/**
 * `arbor-agent/tools`: Tools: `defineTool`, JSON-schema tools, the execution environment and pi's coding tools with their parameter schemas and truncation helpers.
 * @example
 * import { createCodingTools, createExecutionEnv } from "arbor-agent/tools";
 * const tools = createCodingTools(createExecutionEnv({ root: process.cwd() }));
 */
export {
  formatZodError,
  defineTool,
  type ToolResult,
  type ToolExecuteContext,
  type ToolValidation,
  type AgentTool,
  type DefineToolOptions,
  type ApprovalCheckContext,
  type ToolExecutionMode,
  type ToolReplayPolicy,
} from "../core/tools.ts";
export {
  type ToolProcess,
} from "../core/process-group.ts";
export {
  defineJsonSchemaTool,
  type JsonSchemaTool,
} from "../adapters/tools/tool-schema.ts";
export {
  sweepSpillFiles,
  removeSpillFiles,
  spillFilesOf,
  DEFAULT_SPILL_MAX_BYTES,
  DEFAULT_SPILL_RETENTION_MS,
  type SpillSweepOptions,
  type SpillSweepResult,
} from "../adapters/tools/spill-files.ts";
export {
  createExecutionEnv,
  DEFAULT_ENV_ALLOWLIST,
  type ExecutionEnv,
  type ExecutionEnvOptions,
  type PathAccess,
} from "../adapters/execution-env.ts";
export {
  createSandbox,
  sandboxLimitSupport,
  type Sandbox,
  type SandboxMode,
  type SandboxOptions,
  type SandboxProvider,
  type SandboxRequest,
  type SandboxCommand,
  type SandboxLimitSupport,
} from "../adapters/sandbox.ts";
export {
  createCodingTools,
  createReadOnlyTools,
  type ToolSetOptions,
} from "../adapters/tools/index.ts";
export {
  createReadTool,
  readParameters,
  type ReadToolDetails,
  type ReadToolInput,
} from "../adapters/tools/read.ts";
export {
  createWriteTool,
  writeParameters,
  type WriteToolInput,
} from "../adapters/tools/write.ts";
export {
  createEditTool,
  editParameters,
  type EditToolDetails,
  type EditToolInput,
} from "../adapters/tools/edit.ts";
export {
  createBashTool,
  bashParameters,
  type BashToolDetails,
  type BashToolInput,
  type BashToolOptions,
} from "../adapters/tools/bash.ts";
export {
  createGrepTool,
  grepParameters,
  type GrepToolDetails,
  type GrepToolInput,
} from "../adapters/tools/grep.ts";
export {
  createFindTool,
  findParameters,
  type FindToolDetails,
  type FindToolInput,
} from "../adapters/tools/find.ts";
export {
  createLsTool,
  lsParameters,
  type LsToolDetails,
  type LsToolInput,
} from "../adapters/tools/ls.ts";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  GREP_MAX_LINE_LENGTH,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  type TruncationOptions,
  type TruncationResult,
} from "../adapters/tools/truncate.ts";
export {
  generateDiffString,
  type EditDiff,
} from "../adapters/tools/edit-diff.ts";
export {
  planEdits,
  type EditPlan,
  type MatchedEdit,
  type TextEdit,
} from "../adapters/tools/edit-match.ts";
export {
  BASH_MAX_LINE_CHARS,
} from "../adapters/tools/bash-output.ts";
