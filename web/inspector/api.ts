/**
 * The inspector's only I/O: the service's own JSON and server-sent-event routes under the base
 * path the server wrote into `<body data-base>`, with the bearer token the user gave (from the
 * URL fragment `#token=...`, never sent in a URL, or typed into the token field).
 */
export const base = document.body.dataset.base ?? "/api";

export const initialToken = (): string => new URLSearchParams(location.hash.slice(1)).get("token") ?? "";

/** How often the session list is read again, in ms: `#refresh=MS` in the URL fragment (0: never), default 5 000. */
export const DEFAULT_REFRESH_MS = 5_000;
export const refreshMs = (): number => {
  const raw = new URLSearchParams(location.hash.slice(1)).get("refresh");
  const value = raw === null ? Number.NaN : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : DEFAULT_REFRESH_MS;
};

const headers = (token: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

export async function getJson<T>(path: string, token: string): Promise<T> {
  const response = await fetch(base + path, { headers: headers(token) });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** POSTs JSON; rejects with the service's error message for a non-2xx answer. */
export async function postJson<T>(path: string, body: unknown, token: string): Promise<T> {
  const response = await fetch(base + path, { method: "POST", headers: { ...headers(token), "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!response.ok) {
    const text = await response.text();
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      // not JSON: the text as it is
    }
    throw new Error(`${response.status} ${message}`);
  }
  return (await response.json()) as T;
}

/** Opens an event stream; resolves to the response (a 404 is left to the caller). */
export const openStream = (path: string, token: string, signal: AbortSignal): Promise<Response> => fetch(base + path, { headers: headers(token), signal });

/** Reads `data:` frames of a server-sent-event response, one JSON value per frame, until it ends. */
export async function readEvents<T>(response: Response, apply: (value: T) => void): Promise<void> {
  if (!response.ok || !response.body) throw new Error(`${response.status} ${await response.text()}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .map((line) => line.slice(6))
        .join("\n");
      if (data) apply(JSON.parse(data) as T);
    }
  }
}

export const isAbort = (error: unknown): boolean => (error as { name?: string } | null)?.name === "AbortError";
