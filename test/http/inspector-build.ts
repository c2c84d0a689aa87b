/**
 * The inspector tests need the built page (`dist/inspector/`, `npm run build`): built here with
 * vite's `build()` when missing, into a fresh folder then renamed into place, so two test files
 * building at once never serve a half-written folder.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { build } from "vite";
import { inspectorDir } from "../../src/http/inspector-assets.ts";

export async function ensureInspectorBuilt(): Promise<void> {
  if (existsSync(join(inspectorDir, "index.html"))) return;
  const parent = dirname(resolve(inspectorDir));
  mkdirSync(parent, { recursive: true });
  const outDir = mkdtempSync(join(parent, "inspector-build-"));
  try {
    await build({ configFile: resolve(import.meta.dirname, "../../web/inspector/vite.config.ts"), logLevel: "error", build: { outDir, emptyOutDir: true } });
    if (!existsSync(join(inspectorDir, "index.html"))) {
      rmSync(inspectorDir, { recursive: true, force: true });
      renameSync(outDir, inspectorDir);
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}
