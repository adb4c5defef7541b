// The Bridgeline API for TypeScript: the types openapi-typescript generates from
// openapi.yaml (schema.d.ts), an openapi-fetch client that sends the API key, gives every
// POST an Idempotency-Key and retries with the same key, and webhook verification for Node.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";
export { parseEvent, verifyWebhook, WebhookVerificationError, type WebhookEvent } from "./webhook.js";

export interface BridgelineOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** The secret API key (sk_test_... or sk_live_...). Server side only. */
  apiKey: string;
  /** Retries after a network error, a 409 idempotency_key_in_use, a 429 or a 5xx; default 3. */
  maxRetries?: number;
  /** Wait before the first retry, doubled each time (a longer Retry-After wins); default 500 ms. */
  backoffMs?: number;
  /** The fetch to use; default the global one. */
  fetch?: (request: Request) => Promise<Response>;
}

/** A typed client: `const { data, error } = await bl.GET("/v1/calls/{id}", { params: { path: { id } } })`. */
export function createBridgeline(o: BridgelineOptions): Client<paths> {
  const send = o.fetch ?? ((r: Request) => globalThis.fetch(r));
  const maxRetries = o.maxRetries ?? 3;
  const backoff = o.backoffMs ?? 500;
  const retrying = async (input: Request): Promise<Response> => {
    const req = new Request(input);
    if (req.method === "POST" && !req.headers.has("Idempotency-Key")) {
      req.headers.set("Idempotency-Key", crypto.randomUUID());
    }
    let wait = backoff;
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await send(req.clone());
      } catch (e) {
        failure = e;
      }
      const after = res === undefined ? 0 : await retryAfter(res);
      if (attempt >= maxRetries || after < 0) {
        if (res !== undefined) return res;
        throw failure;
      }
      await new Promise((done) => setTimeout(done, Math.max(wait, after)));
      wait *= 2;
    }
  };
  return createClient<paths>({ baseUrl: o.baseUrl, fetch: retrying, headers: { Authorization: `Bearer ${o.apiKey}` } });
}

/** How long to wait before retrying this answer, in ms; negative when it is final. */
async function retryAfter(res: Response): Promise<number> {
  if (res.status === 429) return 1000 * (Number(res.headers.get("Retry-After")) || 0);
  if (res.status >= 500) return 0;
  if (res.status === 409) {
    const body = (await res.clone().json().catch(() => null)) as { error?: { code?: string } } | null;
    return body?.error?.code === "idempotency_key_in_use" ? 0 : -1;
  }
  return -1;
}
