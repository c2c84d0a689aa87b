/**
 * Debian's Chromium driven by playwright-core (headless, fresh profile), and a static file
 * handler for built pages.
 */
import { mkdtempSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import type { ChatHandler } from "../../src/http/chat-handler.ts";

export const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "arbor-chromium-"));
  // playwright passes the fresh profile as --user-data-dir.
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".png": "image/png", ".svg": "image/svg+xml" };

/** `/api/*` to the service, everything else from `root` (`/` is index.html). */
export function withStaticFiles(root: string): (api: ChatHandler) => ChatHandler {
  return (api) => async (request) => {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/api/")) return api(request);
    const file = normalize(join(root, path === "/" ? "index.html" : path));
    if (!file.startsWith(root) || !existsSync(file)) return new Response("not found", { status: 404 });
    return new Response(readFileSync(file), { status: 200, headers: { "content-type": TYPES[extname(file)] ?? "application/octet-stream" } });
  };
}
