/** The body of `arbor replay` (contract: `replay.ts`). */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createExecutionEnv } from "../../adapters/execution-env.ts";
import { createCodingTools } from "../../adapters/tools/index.ts";
import { formatReplayReport } from "../../testing/replay-model.ts";
import { ReplayError } from "../../testing/replay-record.ts";
import { replayRun } from "../../testing/replay-run.ts";
import { CliError } from "../cli-error.ts";
import { withStore } from "../store-context.ts";

/** `arbor replay <session> [--run id] [--json]`: resolves with the exit code. */
export async function replayAction(reference: string, flags: { run?: string; json?: boolean; liveTools?: boolean; cwd?: string }, globals: { db?: string; tenant?: string }): Promise<number> {
  return withStore(globals, { readOnly: true }, async (store) => {
    const sessionId = await store.resolveSessionId(reference);
    let tools: Parameters<typeof replayRun>[2] = {};
    if (flags.liveTools) {
      const cwd = resolve(flags.cwd ?? (await store.repo.open(sessionId)).view.info.cwd ?? process.cwd());
      if (!existsSync(cwd)) throw new CliError(`The session's directory ${cwd} does not exist; pass --cwd to run the tools elsewhere.`, 1);
      tools = { tools: createCodingTools(createExecutionEnv({ root: cwd })), harness: { cwd } };
    }
    const report = await replayRun(store.log, sessionId, { ...tools, ...(flags.run !== undefined ? { runId: flags.run } : {}) }).catch((error: unknown) => {
      if (ReplayError.isInstance(error)) throw new CliError(error.message, 1);
      throw error;
    });
    process.stdout.write(`${flags.json ? JSON.stringify({ sessionId, ...(flags.run ? { runId: flags.run } : {}), ...report }) : formatReplayReport(report)}\n`);
    return report.identical ? 0 : 1;
  });
}
