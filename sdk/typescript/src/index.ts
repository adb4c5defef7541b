// The Bridgeline API for TypeScript on your server (Node 18 or later): the types
// openapi-typescript generates from openapi.yaml (schema.ts), an openapi-fetch client that
// sends the API key, gives every POST an Idempotency-Key and retries with the same key,
// typed errors, paging, and webhook verification.
import { randomUUID } from "node:crypto";
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";
export { parseEvent, verifyWebhook, WebhookVerificationError, type WebhookEvent } from "./webhook.js";

/** The contract's schemas by name: `Schemas["Assistant"]`, `Schemas["SessionCreate"]`... */
export type Schemas = components["schemas"];

/** The typed client createBridgeline returns: `bl.GET`, `bl.POST`, `bl.PATCH`, `bl.DELETE` on the contract's paths. */
export type Bridgeline = Client<paths>;

export interface BridgelineOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8080 for the local stack. */
  baseUrl: string;
  /** The secret API key (sk_test_... or sk_live_...). On your server only, never in a browser. */
  apiKey: string;
  /** Retries after a network error, a 409 idempotency_key_in_use, a 429 or a 5xx; default 3. */
  maxRetries?: number;
  /** Wait before the first retry, doubled each time (a longer Retry-After wins); default 500 ms. */
  backoffMs?: number;
  /** The fetch to use; default the global one. */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A typed client of the API:
 * `const { data, error } = await bl.GET("/v1/calls/{id}", { params: { path: { id } } })`,
 * or `unwrap(await bl.GET(...))` for the object or a thrown BridgelineError.
 * It refuses to run in a browser: the API key would be readable by anyone there.
 */
export function createBridgeline(o: BridgelineOptions): Bridgeline {
  const g = globalThis as { window?: unknown; document?: unknown };
  if (typeof g.window !== "undefined" && typeof g.document !== "undefined") {
    throw new Error(
      "@bridgeline/sdk: createBridgeline runs on your server only: in a browser, anyone could read the API key. " +
        "Create the session on your server and hand the page only rtc_url and participant_token.",
    );
  }
  if (!/^https?:\/\/[^/]/.test(o.baseUrl ?? "")) {
    throw new Error(`@bridgeline/sdk: baseUrl ${JSON.stringify(o.baseUrl)} is not an http(s) URL such as http://127.0.0.1:8080`);
  }
  if (!o.apiKey?.trim()) {
    throw new Error("@bridgeline/sdk: no apiKey (sk_test_... or sk_live_...)");
  }
  const send = o.fetch ?? ((r: Request) => globalThis.fetch(r));
  const maxRetries = o.maxRetries ?? 3;
  const backoff = o.backoffMs ?? 500;
  const retrying = async (input: Request): Promise<Response> => {
    const req = new Request(input);
    if (req.method === "POST" && !req.headers.has("Idempotency-Key")) {
      req.headers.set("Idempotency-Key", randomUUID());
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
  return createClient<paths>({ baseUrl: o.baseUrl.replace(/\/+$/, ""), fetch: retrying, headers: { Authorization: `Bearer ${o.apiKey}` } });
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

/** An error answer of the API; every status has this shape. Branch on `code`, never on `message`. */
export class BridgelineError extends Error {
  /** The HTTP status, e.g. 404. */
  readonly status: number;
  /** The error's family: invalid_request_error, authentication_error, rate_limit_error or api_error. */
  readonly type: string;
  /** The stable reason, e.g. resource_not_found (openapi.yaml's ErrorCode). */
  readonly code: string;
  /** The field, query parameter or header at fault, when there is one. */
  readonly param: string | undefined;
  /** The request's id (its Request-Id header): quote it to support. */
  readonly requestId: string;

  constructor(response: Response, body: unknown) {
    const e = (body as { error?: Record<string, unknown> } | undefined)?.error ?? {};
    const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
    const code = str(e.code) ?? "unexpected_response";
    const message = str(e.message) ?? `HTTP ${response.status}`;
    super(`bridgeline: ${response.status} ${code}: ${message}`);
    this.name = "BridgelineError";
    this.status = response.status;
    this.type = str(e.type) ?? "api_error";
    this.code = code;
    this.param = str(e.param);
    this.requestId = str(e.request_id) ?? response.headers.get("Request-Id") ?? "";
  }
}

/** The object of a call's answer, or a thrown BridgelineError: `const a = unwrap(await bl.POST("/v1/assistants", { body }))`. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) throw new BridgelineError(answer.response, answer.error);
  return answer.data;
}

/** A list page as the API answers it. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/**
 * Every item of a list, newest first, fetching the next page when the loop reaches it.
 * `page` fetches the page after the cursor it is given (spread it into the query); a page
 * that fails throws a BridgelineError.
 *
 *     for await (const a of paginate((cursor) => bl.GET("/v1/assistants", { params: { query: { limit: 50, ...cursor } } }))) { ... }
 */
export async function* paginate<T extends { id: string }>(
  page: (cursor: { starting_after?: string }) => Promise<{ data?: Page<T>; error?: unknown; response: Response }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: { starting_after?: string } = {};
  for (;;) {
    const list = unwrap(await page(cursor));
    yield* list.data;
    const last = list.data[list.data.length - 1];
    if (!list.has_more || last === undefined) return;
    cursor = { starting_after: last.id };
  }
}
