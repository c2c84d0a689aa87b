/**
 * Request bodies read with a size limit: over `maxBytes` (declared or counted) is `413 BODY_TOO_LARGE` and the rest is not read; non-JSON is
 * `400 INVALID_ARGUMENT`; an empty body is `undefined` only with `allowEmpty`.
 */
import { jsonError } from "./responses.ts";
import { ignoreError } from "../core/ignored.ts";

/** The default request body limit: 10 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

function tooLarge(maxBytes: number): Response {
  return jsonError(413, "BODY_TOO_LARGE", `The request body is larger than the service's limit of ${maxBytes} bytes (maxBodyBytes).`);
}

/** The body as UTF-8 text, or a `413` response (see the module contract). */
export async function readLimitedText(request: Request, maxBytes: number): Promise<{ text: string } | { error: Response }> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(ignoreError("cancelling a body refused as too large"));
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
      await reader.cancel().catch(ignoreError("cancelling a body refused as too large"));
      return { error: tooLarge(maxBytes) };
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString("utf8") };
}

/** The body parsed as JSON, or a `413` / `400` response (see the module contract). */
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
