/**
 * The offline inspector page (placeholder until the page lands).
 *
 * @example
 * ```ts
 * inspectorPage({ basePath: "/api" });
 * ```
 */
export function inspectorPage(options: { basePath: string }): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Arbor inspector</title></head><body><h1>Arbor</h1><p>API at ${options.basePath}</p></body></html>`;
}
