/**
 * Who is asking: with `token`, `Authorization: Bearer <token>` (constant-time) or `401` before any route runs; `authenticate` replaces that check and
 * returns the tenant; with neither, every request is `tenant` (default {@link DEFAULT_TENANT}). Every route naming a session answers `404` unless it
 * is the request's tenant's, so no request learns of another tenant's session.
 */
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The tenant of sessions that name none, and of requests when there is one tenant.
 * @example
 * const tenant = request.headers.get("x-tenant") ?? DEFAULT_TENANT;
 */
export const DEFAULT_TENANT = "default";

/** How requests are authenticated. */
export interface ChatAuthOptions {
  /** The bearer token every request must carry. */
  token?: string;
  /** Returns the tenant of an authenticated request, undefined to refuse it (`401`). Wins over `token`. */
  authenticate?: (request: Request) => Promise<string | undefined> | string | undefined;
  /** The tenant of requests that pass the token check (default {@link DEFAULT_TENANT}). Ignored with `authenticate`. */
  tenant?: string;
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/** The request's tenant, or undefined when it is not authenticated. */
export async function resolveTenant(request: Request, options: ChatAuthOptions): Promise<string | undefined> {
  if (options.authenticate) return (await options.authenticate(request)) ?? undefined;
  const tenant = options.tenant ?? DEFAULT_TENANT;
  if (options.token === undefined) return tenant;
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return undefined;
  return timingSafeEqual(digest(match[1]), digest(options.token)) ? tenant : undefined;
}
