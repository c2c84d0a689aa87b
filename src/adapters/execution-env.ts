/**
 * ExecutionEnv: the directory an agent works in, and the policy that keeps its tools inside it. Paths resolve like pi's `resolveToCwd` to a
 * canonical form checked against `root` at every call ({@link PathEscapeError} outside it, always for NUL bytes); the file tools re-walk each path
 * from a held handle refusing symlinks and extra hard links; bash children get only allowlisted variables and the sandbox's confinement; spill
 * files are redacted and swept.
 */
import { randomUUID } from "node:crypto";
import { lstat, readlink, realpath, type FileHandle } from "node:fs/promises";
import { mkdirSync, realpathSync, statSync, type Stats } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { HarnessConfigError, PathEscapeError } from "../core/errors.ts";
import { createSandbox, type Sandbox, type SandboxMode, type SandboxOptions } from "./sandbox.ts";
import { createSecretRedactor, type SecretRedactor } from "../core/secrets.ts";
import { DEFAULT_SPILL_MAX_BYTES, DEFAULT_SPILL_RETENTION_MS, removeSpillFolder, sweepSpillFiles, type SpillSweepResult } from "./tools/spill-files.ts";
import { isMissingPath, openBase, openDirectoryBeneath, openFileIn, type FileIdentity, type HeldDirectory } from "./beneath.ts";

/**
 * Environment variables bash children get by default: the ones a shell and common tools need to work (search path, home, locale, terminal, user,
 * shell, temp dir, time zone), and nothing that usually carries secrets. `LC_*` is a prefix.
 * @example
 * createExecutionEnv({ cwd, envAllowlist: [...DEFAULT_ENV_ALLOWLIST, "NODE_ENV"] });
 */
export const DEFAULT_ENV_ALLOWLIST: readonly string[] = Object.freeze([
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TMPDIR", "TZ",
]);

/** Options of {@link createExecutionEnv}. */
export interface ExecutionEnvOptions {
  /** The directory tools may touch. Must exist. Relative paths resolve against `process.cwd()`. */
  root: string;
  /** Working directory; relative to `root` or absolute, must be inside it. Default: `root`. */
  cwd?: string;
  /** Variable names (or `PREFIX*`) passed to bash children. Default {@link DEFAULT_ENV_ALLOWLIST}. */
  envAllowlist?: readonly string[];
  /** Extra variables for bash children, set after the allowlist filter (they win). */
  env?: Record<string, string>;
  /** Turn the root check off (paths outside the root are allowed). NUL bytes are still refused. Default false. */
  allowOutsideRoot?: boolean;
  /** Where bash spills full outputs. Default: a fresh `<os tmpdir>/arbor-tool-output/<uuid>` per env. Created on demand. */
  spillDir?: string;
  /** Values redacted (literal, reversed, hex, base64, base64url) from bash spill files; pass the harness's `secrets` here too. */
  secrets?: readonly string[];
  /** Spill files older than this (ms) are deleted by the sweep after each spill. Default 7 days. */
  spillRetentionMs?: number;
  /** All spill files under the spill root together, and one spill file alone, stay under this many bytes. Default 256 MiB. */
  spillMaxBytes?: number;
  /**
   * Let the file tools read regular files that have more than one hard link. Default false: such a file may be another name of a file outside the
   * root (`ln /outside/secret root/h`), which no path check can see, so it is refused.
   */
  allowHardLinks?: boolean;
  /** How bash commands are confined (`sandbox.ts`): `"none"` (default), `"bubblewrap"`, a provider function, or {@link SandboxOptions}. */
  sandbox?: SandboxMode | SandboxOptions;
}

/** Options of {@link ExecutionEnv.openDirectory}. */
export interface OpenDirectoryOptions {
  access?: PathAccess;
  /** Create missing directories (inside their held parents). Default false. */
  create?: boolean;
  /** The path as the tool was given it, for errors. */
  path?: string;
}

/** An open file from {@link ExecutionEnv.openFile}; the caller closes `handle`. */
export interface OpenedFile {
  handle: FileHandle;
  /** `fstat` of the open handle (the file actually opened, not a path looked up again). */
  stats: Stats;
}

/** What {@link ExecutionEnv.resolvePath} is asked for: reads may also reach the spill directory. */
export type PathAccess = "read" | "write";

/** The sandbox the built-in tools run in. See the module contract. */
export interface ExecutionEnv {
  /** Realpath of the root directory. */
  readonly root: string;
  /** Absolute working directory inside `root` (realpath). */
  readonly cwd: string;
  readonly envAllowlist: readonly string[];
  readonly allowOutsideRoot: boolean;
  /** Absolute directory for spilled bash output (realpath once created). */
  readonly spillDir: string;
  /**
   * Resolves a tool's path argument to a canonical absolute path inside the root.
   * @throws PathEscapeError when the path contains a NUL byte or resolves outside the root.
   */
  resolvePath(path: string, access?: PathAccess): Promise<string>;
  /**
   * Like {@link ExecutionEnv.resolvePath} for an already absolute path, without the spelling
   * rules (no `@`, `~` or unicode-space handling). `path` is the spelling named in errors.
   * @throws PathEscapeError when the path is not absolute, contains NUL, or resolves outside the root.
   */
  checkPath(absolute: string, access?: PathAccess, path?: string): Promise<string>;
  /** Expands `@`, unicode spaces and `~`, and resolves against cwd, without any check (pi's `resolveToCwd`). */
  expandPath(path: string): string;
  /** The environment for a bash child: allowlisted variables of `process.env` plus overrides. */
  childEnv(): NodeJS.ProcessEnv;
  /** Creates the spill directory if needed and returns its path. */
  ensureSpillDir(): string;
  /** The secrets redacted from spill files (`add` registers more). */
  readonly secrets: SecretRedactor;
  /** The cap of one spill file and of all of them, in bytes. */
  readonly spillMaxBytes: number;
  /** Deletes expired spill files, then the oldest over the size cap (`sweepSpillFiles`). Never rejects. */
  sweepSpillFiles(): Promise<SpillSweepResult>;
  /** Deletes this env's spill folder (call it when the session that owns the env ends). Never rejects. */
  removeSpillFiles(): Promise<void>;
  readonly allowHardLinks: boolean;
  /** The sandbox bash commands run in (`kind: "none"` unless configured). */
  readonly sandbox: Sandbox;
  /**
   * Opens the directory at a path returned by {@link ExecutionEnv.resolvePath} or {@link ExecutionEnv.checkPath} by a symlink-refusing walk from a
   * held handle of its base. The caller closes the returned handle.
   * @throws PathEscapeError when a component is (now) a symbolic link or not a directory, or the
   *   path is outside every base; the fs error (ENOENT...) when a component is missing.
   */
  openDirectory(checked: string, options?: OpenDirectoryOptions): Promise<HeldDirectory>;
  /**
   * Opens a checked path for reading (a file, or a directory, or anything else: the caller looks
   * at `stats`), refusing symbolic links at every component; the open never blocks (O_NONBLOCK).
   * @throws PathEscapeError for a symbolic link, a path outside every base, or a regular file with
   *   more than one hard link while `allowHardLinks` is false; the fs error otherwise.
   */
  openFile(checked: string, options?: { access?: PathAccess; path?: string }): Promise<OpenedFile>;
  /**
   * Opens `name` inside a directory held from {@link ExecutionEnv.openDirectory}, with the same
   * rules as {@link ExecutionEnv.openFile} (no symbolic link, the hard-link refusal).
   * @throws PathEscapeError as openFile does; the fs error otherwise.
   */
  openFileIn(directory: HeldDirectory, name: string, path?: string): Promise<OpenedFile>;
}

const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
const MAX_SYMLINK_HOPS = 40;

/** pi's spelling rules: one leading `@` stripped, unicode spaces → ' ', `~` expanded. */
function expandSpelling(path: string): string {
  const stripped = (path.startsWith("@") ? path.slice(1) : path).replace(UNICODE_SPACES, " ");
  if (stripped === "~") return homedir();
  if (stripped.startsWith("~/")) return homedir() + stripped.slice(1);
  return stripped;
}

/** The canonical form of an absolute path: the realpath of its deepest existing ancestor plus the rest; dangling symlinks are followed. */
async function canonicalize(absolute: string, hops = 0): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new PathEscapeError(`Too many levels of symbolic links while resolving "${absolute}".`);
  try {
    return await realpath(absolute);
  } catch (error) {
    if (!isMissingPath(error)) throw error;
  }
  let existing = absolute;
  const remainder: string[] = [];
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      if (!isMissingPath(error)) throw error;
      const parent = dirname(existing);
      if (parent === existing) return absolute;
      remainder.unshift(basename(existing));
      existing = parent;
    }
  }
  const stats = await lstat(existing);
  if (stats.isSymbolicLink()) {
    const target = resolve(dirname(existing), await readlink(existing));
    return canonicalize(join(target, ...remainder), hops + 1);
  }
  try {
    return join(await realpath(existing), ...remainder);
  } catch (error) {
    // An ancestor of `existing` is a dangling link only if something changed under us; walk again.
    if (!isMissingPath(error)) throw error;
    return canonicalize(absolute, hops + 1);
  }
}

function isInside(path: string, directory: string): boolean {
  return path === directory || path.startsWith(directory.endsWith(sep) ? directory : directory + sep);
}

function matchesAllowlist(name: string, allowlist: readonly string[]): boolean {
  return allowlist.some((entry) => (entry.endsWith("*") ? name.startsWith(entry.slice(0, -1)) : name === entry));
}

/**
 * Creates an {@link ExecutionEnv}. Synchronous: it checks that the root exists and that cwd is a directory inside it.
 * @throws HarnessConfigError when `root` or `cwd` does not exist or is not a directory, or the
 *   sandbox is unknown or needs a missing binary.
 * @throws PathEscapeError when `cwd` is outside `root` (and `allowOutsideRoot` is false).
 * @example
 * const env = createExecutionEnv({ root: repoDir, cwd: "packages/app", envAllowlist: ["PATH", "HOME"] });
 */
export function createExecutionEnv(options: ExecutionEnvOptions): ExecutionEnv {
  const realDirectory = (path: string, field: string): string => {
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch (error) {
      throw new HarnessConfigError(`ExecutionEnv ${field} "${path}" does not exist.`, { cause: error, details: { field, path } });
    }
    if (!statSync(real).isDirectory()) {
      throw new HarnessConfigError(`ExecutionEnv ${field} "${path}" is not a directory.`, { details: { field, path } });
    }
    return real;
  };
  if (typeof options.root !== "string" || options.root.includes("\0")) {
    throw new HarnessConfigError("ExecutionEnv root must be a path string without NUL bytes.", { details: { field: "root" } });
  }
  const root = realDirectory(resolve(options.root), "root");
  const allowOutsideRoot = options.allowOutsideRoot === true;
  const cwd = options.cwd === undefined ? root : realDirectory(resolve(root, options.cwd), "cwd");
  if (!allowOutsideRoot && !isInside(cwd, root)) {
    throw new PathEscapeError(`ExecutionEnv cwd "${options.cwd}" resolves to "${cwd}", which is outside the root "${root}".`, {
      details: { path: options.cwd, resolved: cwd, root },
    });
  }
  const rootStats = statSync(root);
  const rootIdentity: FileIdentity = { dev: rootStats.dev, ino: rootStats.ino };
  const allowHardLinks = options.allowHardLinks === true;
  const sandbox = createSandbox(options.sandbox);
  const envAllowlist = Object.freeze([...(options.envAllowlist ?? DEFAULT_ENV_ALLOWLIST)]);
  const overrides = { ...(options.env ?? {}) };
  // One spill folder per env: the read exception below then covers only this env's own outputs.
  let spillDir = resolve(options.spillDir ?? join(tmpdir(), "arbor-tool-output", randomUUID()));
  const spillRoot = options.spillDir === undefined ? dirname(spillDir) : spillDir;
  const secrets = createSecretRedactor(options.secrets ?? []);
  const spillMaxBytes = options.spillMaxBytes ?? DEFAULT_SPILL_MAX_BYTES;
  const spillRetentionMs = options.spillRetentionMs ?? DEFAULT_SPILL_RETENTION_MS;
  let spillReal: string | undefined;

  const expandPath = (path: string): string => {
    const expanded = expandSpelling(path);
    return isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
  };

  const ensureSpillDir = (): string => {
    if (spillReal === undefined) {
      mkdirSync(spillDir, { recursive: true, mode: 0o700 });
      spillReal = realpathSync.native(spillDir);
      spillDir = spillReal;
    }
    return spillReal;
  };

  const checkPath = async (absolute: string, access: PathAccess = "write", path: string = absolute): Promise<string> => {
    if (absolute.includes("\0") || !isAbsolute(absolute)) {
      throw new PathEscapeError(`Path ${JSON.stringify(path)} is not an absolute path without NUL bytes; refused.`, { details: { path, root } });
    }
    const canonical = await canonicalize(absolute);
    if (allowOutsideRoot || isInside(canonical, root)) return canonical;
    if (access === "read" && spillReal !== undefined && isInside(canonical, spillReal)) return canonical;
    throw new PathEscapeError(
      `Path "${path}" resolves to "${canonical}", which is outside the root "${root}". Only paths inside the root are allowed.`,
      { details: { path, resolved: canonical, root } },
    );
  };

  const resolvePath = async (path: string, access: PathAccess = "write"): Promise<string> => {
    if (typeof path !== "string") {
      throw new PathEscapeError(`Path must be a string, got ${path === null ? "null" : typeof path}.`, { details: { path, root } });
    }
    if (path.includes("\0")) {
      throw new PathEscapeError(`Path ${JSON.stringify(path)} contains a NUL byte; refused.`, { details: { path, root } });
    }
    return checkPath(expandPath(path), access, path);
  };

  /** The base a checked path is walked from, and the components below it. */
  const baseOf = async (checked: string, access: PathAccess, path: string): Promise<{ base: HeldDirectory; parts: string[] }> => {
    const below = (directory: string) => checked.slice(directory.length).split(sep).filter((part) => part !== "");
    if (isAbsolute(checked) && isInside(checked, root)) return { base: await openBase(root, rootIdentity), parts: below(root) };
    if (access === "read" && spillReal !== undefined && isInside(checked, spillReal)) return { base: await openBase(spillReal), parts: below(spillReal) };
    if (allowOutsideRoot && isAbsolute(checked)) return { base: await openBase(sep), parts: below(sep) };
    throw new PathEscapeError(`Path "${path}" (${checked}) is outside the root "${root}"; refused.`, { details: { path, resolved: checked, root } });
  };

  const openDirectory = async (checked: string, options: OpenDirectoryOptions = {}): Promise<HeldDirectory> => {
    const path = options.path ?? checked;
    const { base, parts } = await baseOf(checked, options.access ?? "read", path);
    try {
      return await openDirectoryBeneath(base, parts, { create: options.create === true, path });
    } finally {
      await base.handle.close();
    }
  };

  const openFile = async (checked: string, options: { access?: PathAccess; path?: string } = {}): Promise<OpenedFile> => {
    const path = options.path ?? checked;
    const { base, parts } = await baseOf(checked, options.access ?? "read", path);
    const name = parts.pop();
    if (name === undefined) return { handle: base.handle, stats: await base.handle.stat() };
    try {
      const directory = await openDirectoryBeneath(base, parts, { path });
      try {
        return await openCheckedIn(directory, name, path);
      } finally {
        await directory.handle.close();
      }
    } finally {
      await base.handle.close();
    }
  };

  const openCheckedIn = async (directory: HeldDirectory, name: string, path: string = join(directory.path, name)): Promise<OpenedFile> => {
    const handle = await openFileIn(directory, name, path);
    const stats = await handle.stat().catch(async (error: unknown) => {
      await handle.close();
      throw error;
    });
    if (stats.isFile() && stats.nlink > 1 && !allowHardLinks) {
      await handle.close();
      throw new PathEscapeError(
        `Path "${path}" is a file with ${stats.nlink} hard links; another of its names may be outside the root, so it is not read. Set the ExecutionEnv option allowHardLinks (CLI: --allow-hard-links) to read it.`,
        { details: { path, root, links: stats.nlink } },
      );
    }
    return { handle, stats };
  };

  return {
    root,
    cwd,
    envAllowlist,
    allowOutsideRoot,
    allowHardLinks,
    sandbox,
    openDirectory,
    openFile,
    openFileIn: openCheckedIn,
    get spillDir() {
      return spillDir;
    },
    secrets,
    spillMaxBytes,
    sweepSpillFiles: () => sweepSpillFiles({ root: spillRoot, retentionMs: spillRetentionMs, maxBytes: spillMaxBytes, nested: options.spillDir === undefined }),
    removeSpillFiles: async () => {
      await removeSpillFolder(spillDir);
      spillReal = undefined;
    },
    expandPath,
    ensureSpillDir,
    checkPath,
    resolvePath,
    childEnv(): NodeJS.ProcessEnv {
      const environment: NodeJS.ProcessEnv = {};
      for (const [name, value] of Object.entries(process.env)) {
        if (value !== undefined && matchesAllowlist(name, envAllowlist)) environment[name] = value;
      }
      return { ...environment, ...overrides };
    },
  };
}
