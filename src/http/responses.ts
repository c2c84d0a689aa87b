/**
 * JSON responses of the HTTP service.
 *
 * Contract (ours): errors are `{ error: { code, message } }` with the HTTP status given;
 * bodies are UTF-8 JSON, never cached.
 *
 * @example
 * ```ts
 * return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
 * ```
 */

/**
 * A JSON response.
 *
 * @example
 * ```ts
 * jsonResponse(200, { stopped: true });
 * ```
 */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers } });
}

/**
 * A JSON error response `{ error: { code, message } }`.
 *
 * @example
 * ```ts
 * jsonError(401, "UNAUTHORIZED", "Missing bearer token.");
 * ```
 */
export function jsonError(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { error: { code, message } }, headers);
}
