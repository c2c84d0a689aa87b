/**
 * JSON responses of the HTTP service: errors are `{ error: { code, message } }` with the status given; bodies are UTF-8 JSON, never cached.
 * @example
 * return jsonError(404, "SESSION_NOT_FOUND", `No session "${id}".`);
 */

/** A JSON response. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers } });
}

/** A JSON error response `{ error: { code, message } }`. */
export function jsonError(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { error: { code, message } }, headers);
}
