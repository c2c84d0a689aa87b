#!/usr/bin/env node
/**
 * The consumer test (issue 11): packs this package, installs the tarball into a fresh project
 * outside the repository (from the npm cache where possible), then, from that project:
 * 1. runs a plain `node` ESM script that imports the package by name (no TypeScript loader),
 *    creates a harness on an in-memory log against `startOpenAIServer()`, prompts once and
 *    reads a typed field of a tool event;
 * 2. type-checks a TypeScript file with `module: nodenext`, `strict`, `exactOptionalPropertyTypes`,
 *    `noUncheckedIndexedAccess` and `skipLibCheck: false` (zero errors);
 * 3. runs `npx arbor --help`;
 * 4. runs every program in `examples/` against the loopback server.
 * Step 1 also fetches the inspector's built page and script from the installed package.
 *
 * Usage: `npm run test:package` (after `npm run build`). Exits non-zero on the first failure.
 * It runs under the `node` that runs it (and the `npm` on PATH): `.ci/run` runs it under Node 24 and
 * again under Node 22 with `ARBOR_CONSUMER_NODE_MAJOR=22`, which it checks before anything else.
 * Prints `N passed, 0 failed` at the end.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(fileURLToPath(new URL("..", import.meta.url)));
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const devVersion = (name) => pkg.devDependencies[name] ?? pkg.dependencies[name];
const run = (command, args, options = {}) =>
  execFileSync(command, args, { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", ...options });
let passed = 0;
const check = (name, fn) => {
  process.stdout.write(`consumer: ${name} ... `);
  const output = fn();
  passed++;
  process.stdout.write("ok\n");
  return output;
};

const wantedMajor = process.env.ARBOR_CONSUMER_NODE_MAJOR;
check(`node ${process.version}${wantedMajor === undefined ? "" : ` (wanted ${wantedMajor})`}`, () => {
  if (wantedMajor !== undefined && process.versions.node.split(".")[0] !== wantedMajor)
    throw new Error(`the consumer test runs under node ${process.version}, not ${wantedMajor}`);
});
if (!existsSync(join(repo, "dist", "index.js")) || !existsSync(join(repo, "dist", "inspector", "index.html"))) run("npm", ["run", "build"], { cwd: repo, stdio: "inherit" });
const work = mkdtempSync(join(tmpdir(), "arbor-consumer-"));
try {
  const tarball = check("npm pack", () => {
    const out = run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: repo });
    return join(work, JSON.parse(out)[0].filename);
  });

  const app = join(work, "app");
  cpSync(join(repo, "scripts", "consumer"), app, { recursive: true });
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify(
      {
        name: "arbor-consumer",
        private: true,
        type: "module",
        // npm 11 runs dependencies' install scripts only when listed: better-sqlite3 builds its addon.
        allowScripts: { "better-sqlite3": true },
      },
      null,
      2,
    ),
  );
  check("npm install of the tarball, its peers, typescript and @types/node", () =>
    run(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        tarball,
        `typescript@${devVersion("typescript")}`,
        `@types/node@${devVersion("@types/node")}`,
        // The MCP example runs the reference server from npm.
        `@modelcontextprotocol/server-everything@${devVersion("@modelcontextprotocol/server-everything")}`,
      ],
      { cwd: app, stdio: ["ignore", "ignore", "inherit"] },
    ),
  );
  check(`peer ai ${pkg.peerDependencies.ai} installed by npm as the user gets it`, () => {
    const installed = JSON.parse(readFileSync(join(app, "node_modules", "ai", "package.json"), "utf8")).version;
    const major = pkg.peerDependencies.ai.replace(/^\D*/, "").split(".")[0];
    if (installed.split(".")[0] !== major) throw new Error(`npm installed ai ${installed}, not the peer major ${major}`);
    process.stdout.write(`(ai ${installed}) `);
  });
  check("no TypeScript loader in the consumer project", () => {
    if (existsSync(join(app, "node_modules", "tsx"))) throw new Error("tsx was installed with the package");
  });

  const output = check("node app.mjs (import by name, harness, prompt, typed tool event)", () =>
    run(process.execPath, ["app.mjs"], { cwd: app }),
  );
  if (!output.includes("tool ended: succeeded")) throw new Error(`app.mjs printed:\n${output}`);
  if (!output.includes("http messages: user,assistant")) throw new Error(`app.mjs (arbor-agent/http) printed:\n${output}`);
  if (!output.includes("http inspector: page 200 with base, script 200")) throw new Error(`app.mjs (the inspector's built files) printed:\n${output}`);

  check("tsc --noEmit with nodenext, strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess, skipLibCheck false", () =>
    run(join(app, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd: app, stdio: "inherit" }),
  );

  check("npx arbor --help", () => {
    const help = run("npx", ["--no-install", "arbor", "--help"], { cwd: app });
    if (!help.includes("Usage: arbor")) throw new Error(`arbor --help printed:\n${help}`);
  });

  const examples = join(repo, "examples");
  for (const file of existsSync(examples) ? readdirSync(examples).filter((name) => name.endsWith(".mjs")).sort() : []) {
    cpSync(join(examples, file), join(app, file));
    check(`example ${file}`, () => {
      const printed = run(process.execPath, [file], { cwd: app, env: { ...process.env, ARBOR_EXAMPLE_SELF_TEST: "1" } });
      if (!printed.includes("example ok")) throw new Error(`${file} printed:\n${printed}`);
    });
  }
  console.log(`${passed} passed, 0 failed`);
} catch (error) {
  console.error(`\nconsumer: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  console.log(`${passed} passed, 1 failed`);
  process.exitCode = 1;
} finally {
  if (process.exitCode !== 1) rmSync(work, { recursive: true, force: true });
  else console.error(`consumer: the project is kept at ${work}`);
}
