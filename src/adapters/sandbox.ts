/**
 * The sandbox port of {@link ExecutionEnv}: how a bash command is confined. `"none"` (default) confines nothing but cwd and environment.
 * `"bubblewrap"` runs under `bwrap` with only the root (read-write) and the system (read-only) visible, fresh namespaces (no network unless
 * `allowNetwork`), the allowlisted environment, and every child ending with the command; limits via `ulimit` or a `pids` cgroup
 * ({@link sandboxLimitSupport}). A missing `bwrap` throws `HarnessConfigError` at env creation. A provider function returns the command to spawn.
 */
import { randomUUID } from "node:crypto";
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { HarnessConfigError } from "../core/errors.ts";
import { ignored } from "../core/ignored.ts";

/** What a sandbox is asked to run. */
export interface SandboxRequest {
  /** Shell binary (`/bin/bash` or `sh`). */
  shell: string;
  /** The command text for `<shell> -c`. */
  command: string;
  /** Realpath of the env root. */
  root: string;
  /** Working directory (inside the root). */
  cwd: string;
  /** The allowlisted environment for the command. */
  env: NodeJS.ProcessEnv;
}

/** What to spawn for a {@link SandboxRequest}. */
export interface SandboxCommand {
  file: string;
  args: string[];
  /** Environment of the spawned process. */
  env: NodeJS.ProcessEnv;
  /** Working directory of the spawned process (outside view). */
  cwd: string;
  /** Called once after the process and its output have ended (e.g. to remove a cgroup). */
  cleanup?: () => void;
}

/** A sandbox provider: maps a request to the command that runs it confined. */
export type SandboxProvider = (request: SandboxRequest) => SandboxCommand;

/** The sandbox modes of an {@link ExecutionEnv}. */
export type SandboxMode = "none" | "bubblewrap" | SandboxProvider;

/** Options of a sandbox (the ExecutionEnv `sandbox` option takes a mode or these). */
export interface SandboxOptions {
  mode: SandboxMode;
  /** Share the host's network (bubblewrap). Default false: loopback of its own only. */
  allowNetwork?: boolean;
  /** Address-space limit per process in bytes (`ulimit -v`; bubblewrap). */
  memoryLimitBytes?: number;
  /** Most processes at once (bubblewrap; pids cgroup where writable, else `ulimit -u`). */
  processLimit?: number;
  /** The bwrap binary. Default: `/usr/bin/bwrap`, else `bwrap` on PATH. */
  bwrapPath?: string;
}

/** A resolved sandbox. */
export interface Sandbox {
  /** `"none"`, `"bubblewrap"` or `"provider"`. */
  readonly kind: "none" | "bubblewrap" | "provider";
  readonly allowNetwork: boolean;
  /** One line for start-up banners, e.g. `none (commands can reach the whole machine)`. */
  describe(): string;
  /** The command to spawn. */
  wrap(request: SandboxRequest): SandboxCommand;
}

/** How the optional limits are enforced on this machine, for this user. */
export interface SandboxLimitSupport {
  /** `"cgroup"` (enforced), `"ulimit"` (enforced, not root) or `"none"` (root without a writable pids cgroup). */
  processLimit: "cgroup" | "ulimit" | "none";
  /** The writable pids cgroup directory a limit is created under, when there is one. */
  pidsCgroup?: string;
}

function findBwrap(explicit: string | undefined): string | undefined {
  const candidates = explicit ? [explicit] : ["/usr/bin/bwrap", ...(process.env.PATH ?? "").split(":").filter(Boolean).map((directory) => join(directory, "bwrap"))];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch (error) {
      ignored("a bwrap candidate is not executable; the next one is tried", error);
    }
  }
  return undefined;
}

function writable(directory: string): boolean {
  try {
    accessSync(directory, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

let limitSupport: SandboxLimitSupport | undefined;

/**
 * Which process limit the bubblewrap sandbox can enforce here (probed once per process).
 * @example
 * if (sandboxLimitSupport().processLimit === "none") console.warn("process limit not enforced");
 */
export function sandboxLimitSupport(): SandboxLimitSupport {
  if (limitSupport) return limitSupport;
  const v1 = "/sys/fs/cgroup/pids";
  const v2 = "/sys/fs/cgroup";
  let pidsCgroup: string | undefined;
  if (existsSync(join(v1, "cgroup.procs")) && writable(v1)) pidsCgroup = v1;
  else if (existsSync(join(v2, "cgroup.subtree_control")) && writable(v2)) {
    try {
      if (readFileSync(join(v2, "cgroup.subtree_control"), "utf8").split(/\s+/).includes("pids")) pidsCgroup = v2;
    } catch (error) {
      ignored("cgroup v2 subtree_control is unreadable; no pids cgroup is used", error);
    }
  }
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  limitSupport = pidsCgroup ? { processLimit: "cgroup", pidsCgroup } : { processLimit: isRoot ? "none" : "ulimit" };
  return limitSupport;
}

/** A fresh pids cgroup with `pids.max`, and its cleanup; undefined when none can be made. */
function pidsCgroupFor(limit: number): { directory: string; cleanup: () => void } | undefined {
  const parent = sandboxLimitSupport().pidsCgroup;
  if (!parent) return undefined;
  const directory = join(parent, `arbor-${randomUUID()}`);
  try {
    mkdirSync(directory);
    writeFileSync(join(directory, "pids.max"), String(limit));
  } catch {
    return undefined;
  }
  const cleanup = () => {
    // The PID namespace is gone when the output has ended; the last tasks may take a moment to leave.
    const attempt = (left: number) => {
      try {
        rmdirSync(directory);
      } catch {
        if (left > 0) setTimeout(() => attempt(left - 1), 200).unref();
      }
    };
    attempt(50);
  };
  return { directory, cleanup };
}

/** Host top-level entries the system needs: links reproduced as links, directories bound read-only. */
const SYSTEM_ENTRIES = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

function isInsideOrEqual(path: string, directory: string): boolean {
  const rest = relative(directory, path);
  return rest === "" || (!rest.startsWith("..") && !isAbsolute(rest));
}

function bubblewrapArgs(bwrap: string, request: SandboxRequest, options: SandboxOptions): SandboxCommand {
  const args = ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"];
  if (!options.allowNetwork) args.push("--unshare-net");
  args.push("--ro-bind", "/usr", "/usr");
  for (const entry of SYSTEM_ENTRIES) {
    const stats = lstatSync(entry, { throwIfNoEntry: false });
    if (!stats) continue;
    if (stats.isSymbolicLink()) args.push("--symlink", readlinkSync(entry), entry);
    else args.push("--ro-bind", entry, entry);
  }
  args.push("--ro-bind-try", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp");
  const home = request.env.HOME;
  if (home && isAbsolute(home) && !isInsideOrEqual(home, request.root) && home !== sep && !home.startsWith("/usr") && !home.startsWith("/etc")) {
    args.push("--tmpfs", home);
  }
  // Parents of the root that are not mounted yet appear as empty directories; the root itself last.
  args.push("--bind", request.root, request.root, "--chdir", request.cwd);
  const limits: string[] = [];
  if (options.memoryLimitBytes !== undefined) limits.push(`ulimit -v ${Math.max(1, Math.floor(options.memoryLimitBytes / 1024))}`);
  if (options.processLimit !== undefined) limits.push(`ulimit -u ${Math.max(1, Math.floor(options.processLimit))}`);
  const inner = limits.length > 0 ? [request.shell, "-c", `${limits.join(" && ")} && exec "$0" -c "$1"`, request.shell, request.command] : [request.shell, "-c", request.command];
  args.push("--", ...inner);
  const cgroup = options.processLimit !== undefined ? pidsCgroupFor(Math.max(1, Math.floor(options.processLimit))) : undefined;
  if (!cgroup) return { file: bwrap, args, env: { ...request.env }, cwd: request.cwd };
  // Join the cgroup before bwrap starts, so every process of the sandbox is counted.
  return {
    file: "/bin/sh",
    args: ["-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup.directory, bwrap, ...args],
    env: { ...request.env },
    cwd: request.cwd,
    cleanup: cgroup.cleanup,
  };
}

/**
 * Resolves the ExecutionEnv `sandbox` option. See the module contract.
 * @throws HarnessConfigError for an unknown mode, or `"bubblewrap"` without a `bwrap` binary.
 * @example
 * const sandbox = createSandbox({ mode: "bubblewrap", memoryLimitBytes: 512 * 1024 * 1024 });
 */
export function createSandbox(option: SandboxMode | SandboxOptions | undefined): Sandbox {
  const options: SandboxOptions = option === undefined || typeof option === "string" || typeof option === "function" ? { mode: option ?? "none" } : option;
  const allowNetwork = options.allowNetwork === true;
  const { mode } = options;
  if (mode === "none") {
    return {
      kind: "none",
      allowNetwork: true,
      describe: () => "none (commands run unconfined: they can read and write anywhere this user can, and use the network)",
      wrap: (request) => ({ file: request.shell, args: ["-c", request.command], env: { ...request.env }, cwd: request.cwd }),
    };
  }
  if (typeof mode === "function") {
    return { kind: "provider", allowNetwork, describe: () => "provider (confinement as the provider function defines it)", wrap: (request) => mode(request) };
  }
  if (mode !== "bubblewrap") {
    throw new HarnessConfigError(`ExecutionEnv sandbox "${String(mode)}" is unknown; use "none", "bubblewrap" or a provider function.`, { details: { field: "sandbox" } });
  }
  const bwrap = findBwrap(options.bwrapPath);
  if (!bwrap) {
    throw new HarnessConfigError(
      `ExecutionEnv sandbox "bubblewrap" needs the bwrap binary (${options.bwrapPath ?? "/usr/bin/bwrap or bwrap on PATH"}); install the Debian package bubblewrap.`,
      { details: { field: "sandbox" } },
    );
  }
  const limitsText = () => {
    const parts: string[] = [];
    if (options.memoryLimitBytes !== undefined) parts.push(`memory ${Math.floor(options.memoryLimitBytes / (1024 * 1024))} MiB`);
    if (options.processLimit !== undefined) {
      const support = sandboxLimitSupport().processLimit;
      parts.push(`${options.processLimit} processes${support === "none" ? " (NOT enforced: root without a writable pids cgroup)" : ` (${support})`}`);
    }
    return parts.length > 0 ? `, ${parts.join(", ")}` : "";
  };
  return {
    kind: "bubblewrap",
    allowNetwork,
    describe: () => `bubblewrap (root read-write, system read-only, ${allowNetwork ? "network allowed" : "no network"}${limitsText()})`,
    wrap: (request) => bubblewrapArgs(bwrap, request, options),
  };
}
