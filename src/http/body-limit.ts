/**
 * Request bodies read with a size limit.
 *
 * Contract (ours):
 * - a body larger than `maxBytes` (by its `Content-Length`, or counted while it streams in) is
 *   refused with `413 BODY_TOO_LARGE`, a JSON error naming the limit, and the rest of the body is
 *   not read (the stream is cancelled): nothing of it is parsed, logged or sent to a model;
 * - a body that is not JSON is a `400 INVALID_ARGUMENT`; an empty body is `undefined` when
 *   `allowEmpty`, else the same `400`.
 *
 * @example
 * ```ts
 * const body = await readLimitedJson(request, 10 * 1024 * 1024);
 * if ("error" in body) return body.error;
 * ```
 */
import { jsonError } from "./responses.ts";

/** The default request body limit: 10 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

function tooLarge(maxBytes: number): Response {
  return jsonError(413, "BODY_TOO_LARGE", `The request body is larger than the service's limit of ${maxBytes} bytes (maxBodyBytes).`);
}

/**
 * The body as UTF-8 text, or a `413` response (see the module contract).
 *
 * @example
 * ```ts
 * const text = await readLimitedText(request, 1024);
 * ```
 */
export async function readLimitedText(request: Request, maxBytes: number): Promise<{ text: string } | { error: Response }> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => undefined);
    return { error: tooLarge(maxBytes) };
  }
  if (!request.body) return { text: "" };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { error: tooLarge(maxBytes) };
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString("utf8") };
}

/**
 * The body parsed as JSON, or a `413` / `400` response (see the module contract).
 *
 * @example
 * ```ts
 * const body = await readLimitedJson(request, maxBytes, { allowEmpty: true });
 * ```
 */
export async function readLimitedJson(request: Request, maxBytes: number, options: { allowEmpty?: boolean; expected?: string } = {}): Promise<{ value: unknown } | { error: Response }> {
  const read = await readLimitedText(request, maxBytes);
  if ("error" in read) return read;
  if (read.text.trim() === "" && options.allowEmpty === true) return { value: undefined };
  try {
    return { value: JSON.parse(read.text) as unknown };
  } catch {
    return { error: jsonError(400, "INVALID_ARGUMENT", `The body must be JSON${options.expected ? `: ${options.expected}` : ""}.`) };
  }
}
