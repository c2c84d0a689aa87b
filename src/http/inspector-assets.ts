/**
 * The offline inspector's built files (`web/inspector/` built by vite into `dist/inspector/`), served at `/`, `/inspector` and
 * `/inspector/assets/<file>`, found relative to this module (two folders below the package root in `src/http/` and in the bundled `dist/` alike,
 * `scripts/package-build.config.ts`). The page holds no data; unbuilt files answer `503` naming the build command; only files
 * the build wrote are served (no URL path reaches the file system).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder `vite build --config web/inspector/vite.config.ts` writes. */
export const inspectorDir = fileURLToPath(new URL("../../dist/inspector/", import.meta.url));

const ASSETS = "/inspector/assets/";
const TYPES: Record<string, string> = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png" };

const notBuilt = (dir: string): Response =>
  new Response(`The inspector page is not built (no ${join(dir, "index.html")}). Run \`npm run build\` (or \`npx vite build --config web/inspector/vite.config.ts\`) in the package's checkout.\n`, {
    status: 503,
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-cache" },
  });

/**
 * The inspector's answer to a `GET` of `path`: the page at `/` and `/inspector`, a built asset under `/inspector/assets/`, a `503` when the files are
 * not built; `undefined` for any other path. `dir` is the built folder (default {@link inspectorDir}; tests pass another).
 */
export function inspectorResponse(path: string, basePath: string, dir = inspectorDir): Response | undefined {
  if (path === "/" || path === "/inspector" || path === "/inspector/") {
    const index = join(dir, "index.html");
    if (!existsSync(index)) return notBuilt(dir);
    const base = basePath.replace(/[^A-Za-z0-9/_.-]/g, "");
    const html = readFileSync(index, "utf8").replace('<body data-base="">', `<body data-base="${base}">`);
    return new Response(html, { status: 200, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" } });
  }
  if (!path.startsWith(ASSETS)) return undefined;
  const assets = join(dir, "assets");
  if (!existsSync(assets)) return notBuilt(dir);
  const name = path.slice(ASSETS.length);
  if (!readdirSync(assets).includes(name)) return new Response(`No inspector asset ${name}.\n`, { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  return new Response(readFileSync(join(assets, name)), { status: 200, headers: { "content-type": TYPES[extname(name)] ?? "application/octet-stream", "cache-control": "no-cache" } });
}
