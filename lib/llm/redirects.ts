/**
 * Redirects of model requests. A model request carries the whole conversation and the
 * key; `fetch` follows redirects by default, so an endpoint answering `307` with another
 * origin made the conversation go there too. Model requests therefore follow a redirect
 * only within the same origin (scheme, host and port); one to another origin is handed
 * back as the 3xx answer it is, which the failure wording reports with its target and
 * the remedy.
 *
 * @module
 */

/** Redirects followed within one origin before the answer is taken as it is. */
export const MAX_SAME_ORIGIN_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Why a same-origin redirect was not followed: it led back to an address already asked
 * (`loop`), or the chain grew past {@linkcode MAX_SAME_ORIGIN_REDIRECTS} (`too_many`).
 * `chain` holds every address asked, origin and path only (a query may hold a token).
 */
export interface RedirectStop {
  kind: "loop" | "too_many";
  chain: string[];
}

// Keyed by the answer's headers, which travel with the failure as far as its wording.
const stops = new WeakMap<Headers, RedirectStop>();

/**
 * Why the redirect answer carrying `headers` was handed back although it stays within
 * the endpoint's origin; `undefined` for an answer redirecting to another origin.
 */
export function redirectStopOf(headers: Headers | undefined): RedirectStop | undefined {
  return headers === undefined ? undefined : stops.get(headers);
}

/** `fetch` for model requests: same-origin redirects followed, others returned. */
export function sameOriginFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init = {}) => {
    let url = new URL(input instanceof Request ? input.url : String(input));
    let request: RequestInit = { ...init, redirect: "manual" };
    // Method and address: a 303 answered to a POST may come back to the same address as GET.
    const asked = new Set<string>();
    const chain: string[] = [];
    for (let hop = 0;; hop++) {
      asked.add(`${(request.method ?? "GET").toUpperCase()} ${url.href}`);
      chain.push(`${url.origin}${url.pathname}`);
      const response = await base(url, request);
      const location = response.headers.get("location");
      if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
      const target = new URL(location, url);
      if (target.origin !== url.origin) return response;
      const nextMethod = response.status === 303 ||
          (response.status <= 302 && (request.method ?? "GET").toUpperCase() === "POST")
        ? "GET"
        : (request.method ?? "GET").toUpperCase();
      if (asked.has(`${nextMethod} ${target.href}`)) {
        stops.set(response.headers, {
          kind: "loop",
          chain: [...chain, `${target.origin}${target.pathname}`],
        });
        return response;
      }
      if (hop >= MAX_SAME_ORIGIN_REDIRECTS) {
        stops.set(response.headers, { kind: "too_many", chain });
        return response;
      }
      await response.body?.cancel();
      // As fetch does: 303 (and 301/302 after a POST) continue as GET without a body.
      const method = (request.method ?? "GET").toUpperCase();
      if (response.status === 303 || (response.status <= 302 && method === "POST")) {
        request = { ...request, method: "GET", body: undefined };
      }
      url = target;
    }
  };
}

/** The target of a redirect answer, without its query (which may hold a token). */
export function redirectTarget(location: string | null, from: string): string | undefined {
  if (location === null) return undefined;
  try {
    const target = new URL(location, from);
    return `${target.origin}${target.pathname}`;
  } catch {
    return undefined;
  }
}
