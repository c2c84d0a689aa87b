/**
 * Process groups of tool commands as recorded in `tool.updated` (`{ pgid, processStart?, host }`, the start time telling a reused pid apart), and
 * ending them after a crash: {@link endOrphanedGroup} SIGKILLs a group only when it is on this host, alive, and its leader (if alive) has the
 * recorded start time. Not reached: processes that left the group (`setsid`), or a group spawned in the tick before its record committed.
 */
import { readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { ignored } from "./ignored.ts";

/** A process group started by a tool call, as recorded in `tool.updated`. */
export interface ToolProcess {
  /** The process group id (= the leader's pid). */
  pgid: number;
  /** Kernel start time of the leader (Linux `/proc/<pid>/stat` field 22, clock ticks since boot), when known. */
  processStart?: string;
  /** The host it runs on (`os.hostname()`). */
  host?: string;
}

/** What {@link endOrphanedGroup} did. */
export type OrphanOutcome = "killed" | "gone" | "reused" | "other-host";

/** The kernel start time of `pid` (field 22 of `/proc/<pid>/stat`), or undefined without `/proc` or when the process does not exist. */
export function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Pids of the group's members that are not zombies (from `/proc`); undefined without `/proc`. */
function liveMembers(pgid: number): number[] | undefined {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const members: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // After the command name: state, ppid, pgrp, ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z" && state !== "X") members.push(Number(name));
    } catch (error) {
      ignored("the process ended while its group was read", error);
    }
  }
  return members;
}

/** True while some member of the group runs (zombies, which nothing can end, do not count). */
function groupAlive(pgid: number): boolean {
  const members = liveMembers(pgid);
  if (members) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True when the pid exists and is not a zombie. */
function leaderRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** Whether a recorded group still runs here and is the recorded one: `"alive"`, `"gone"`, `"reused"` or `"other-host"` (cannot be checked). */
export function orphanStatus(recorded: ToolProcess): "alive" | Exclude<OrphanOutcome, "killed"> {
  if (recorded.host !== undefined && recorded.host !== hostname()) return "other-host";
  if (!Number.isInteger(recorded.pgid) || recorded.pgid <= 1 || !groupAlive(recorded.pgid)) return "gone";
  if (leaderRunning(recorded.pgid) && recorded.processStart !== undefined && processStartOf(recorded.pgid) !== recorded.processStart) return "reused";
  return "alive";
}

/** Ends (SIGKILL) a recorded process group that outlived its starter, after checking it again with {@link orphanStatus}. */
export function endOrphanedGroup(recorded: ToolProcess): OrphanOutcome {
  const status = orphanStatus(recorded);
  if (status !== "alive") return status;
  try {
    process.kill(-recorded.pgid, "SIGKILL");
    return "killed";
  } catch {
    return "gone";
  }
}

/**
 * True when `owner` (`{ pid, host, processStart? }`, a run's or a lease's recorded owner) is ANOTHER process on THIS host that still exists with the
 * same start time; an owner on another host cannot be checked and counts as alive; this process, a malformed owner or a dead pid does not.
 */
export function isOtherLiveProcess(owner: unknown): boolean {
  if (!owner || typeof owner !== "object") return false;
  const { pid, host, processStart } = owner as { pid?: unknown; host?: unknown; processStart?: unknown };
  if (typeof pid !== "number" || typeof host !== "string") return false;
  if (host !== hostname()) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (processStart === undefined) return true;
  return processStartOf(pid) === processStart;
}
