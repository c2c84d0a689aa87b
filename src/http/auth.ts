/**
 * Who is asking: the bearer token check and the tenant of a request.
 *
 * Contract (ours):
 * - with `token`, a request must carry `Authorization: Bearer <token>` (compared in constant
 *   time); anything else is `401` before any route runs, so it reads and writes nothing;
 * - `authenticate`, when given, replaces the token check: it returns the request's tenant, or
 *   undefined for `401` (a multi-tenant service maps its own credentials here);
 * - with neither, every request is the default tenant (for loopback use; `arbor serve`
 *   refuses a non-loopback host without a token);
 * - `tenant` names the tenant of requests that pass the token check (or of every request when
 *   there is neither a token nor `authenticate`); default {@link DEFAULT_TENANT}. `arbor serve`
 *   sets it from `--tenant` / `ARBOR_TENANT`;
 * - a session's tenant is `session.created.tenant`, or {@link DEFAULT_TENANT} when it has none;
 *   every route that names a session answers `404` unless that tenant is the request's, so a
 *   request never reaches (or learns of) another tenant's session.
 *
 * @example
 * ```ts
 * const tenant = await resolveTenant(request, { token: process.env.ARBOR_TOKEN });
 * if (tenant === undefined) return unauthorized();
 * ```
 */
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The tenant of sessions that name none, and of requests when there is one tenant.
 *
 * @example
 * ```ts
 * const tenant = request.headers.get("x-tenant") ?? DEFAULT_TENANT;
 * ```
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

/**
 * The request's tenant, or undefined when it is not authenticated.
 *
 * @example
 * ```ts
 * await resolveTenant(new Request("http://x/", { headers: { authorization: "Bearer t" } }), { token: "t" }); // "default"
 * ```
 */
export async function resolveTenant(request: Request, options: ChatAuthOptions): Promise<string | undefined> {
  if (options.authenticate) return (await options.authenticate(request)) ?? undefined;
  const tenant = options.tenant ?? DEFAULT_TENANT;
  if (options.token === undefined) return tenant;
  const header = request.headers.get("authorization") ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (!match) return undefined;
  return timingSafeEqual(digest(match[1]), digest(options.token)) ? tenant : undefined;
}
