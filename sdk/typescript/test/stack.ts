// Run by shared/httpapi's TestTypeScriptSDKAgainstTheStack against the real handler stack
// (BRIDGELINE_URL, BRIDGELINE_KEY) and a delivery Bridgeline's signer signed
// (WEBHOOK_SECRET, WEBHOOK_HEADERS, WEBHOOK_BODY). Prints "ok" or exits non-zero.
import { createBridgeline, parseEvent, verifyWebhook, WebhookVerificationError } from "../src/index.js";

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

// The first POST reaches the server and its answer is lost, as a network failure after
// the request was applied: the client retries with the same Idempotency-Key.
const keys: string[] = [];
let lost = false;
const bl = createBridgeline({
  baseUrl: env("BRIDGELINE_URL"),
  apiKey: env("BRIDGELINE_KEY"),
  backoffMs: 10,
  fetch: async (req) => {
    const res = await fetch(req);
    if (req.method === "POST") {
      keys.push(req.headers.get("Idempotency-Key") ?? "");
      if (!lost) {
        lost = true;
        throw new TypeError("connection reset after the request was sent");
      }
    }
    return res;
  },
});

const first = await bl.POST("/v1/assistants", { body: { name: "T0" } });
check(first.data?.name === "T0", `create: ${JSON.stringify(first.error)}`);
check(first.response.headers.get("Idempotent-Replayed") === "true", "the retried create was not replayed");
check(keys.length === 2 && keys[0] !== "" && keys[0] === keys[1], `Idempotency-Keys ${JSON.stringify(keys)}`);
for (const name of ["T1", "T2"]) {
  const r = await bl.POST("/v1/assistants", { body: { name } });
  check(r.data?.name === name, `create ${name}: ${JSON.stringify(r.error)}`);
}

// A key of the caller's, as the contract's header parameter: the same create again is
// the first one's answer.
const keyed = { params: { header: { "Idempotency-Key": "stack-ts-create-t3" } }, body: { name: "T3" } };
const t3 = await bl.POST("/v1/assistants", keyed);
const t3again = await bl.POST("/v1/assistants", keyed);
check(t3.data !== undefined && t3again.data?.id === t3.data.id, `keyed create ${JSON.stringify(t3again.error)}`);
check(keys[keys.length - 1] === "stack-ts-create-t3", `the caller's key was not sent: ${JSON.stringify(keys)}`);
const archived = await bl.POST("/v1/assistants/{id}/archive", { params: { path: { id: t3.data!.id } } });
check(archived.data?.status === "archived", `archive ${JSON.stringify(archived.error)}`);

// Paging with starting_after, newest first, each assistant once.
const names: string[] = [];
let after: string | undefined;
for (;;) {
  const query: { limit: number; starting_after?: string } = { limit: 2 };
  if (after !== undefined) query.starting_after = after;
  const page = await bl.GET("/v1/assistants", { params: { query } });
  check(page.data !== undefined, `list: ${JSON.stringify(page.error)}`);
  const list = page.data!;
  names.push(...list.data.map((a) => a.name));
  const last = list.data[list.data.length - 1];
  if (!list.has_more || last === undefined) break;
  after = last.id;
}
check(names.join(",") === "T2,T1,T0", `names ${names.join(",")}`);

// A typed error with every field.
const missing = await bl.GET("/v1/assistants/{id}", { params: { path: { id: "asst_01jd3f4g5h6j7k8m9n0p1q2r3t" } } });
check(missing.response.status === 404, `get unknown: ${missing.response.status}`);
const e = missing.error?.error;
check(e?.code === "resource_not_found" && e.param === "id" && e.request_id === missing.response.headers.get("Request-Id"),
  `error ${JSON.stringify(missing.error)}`);

// A delivery signed by Bridgeline verifies with its secret, not with another or altered.
const headers = JSON.parse(env("WEBHOOK_HEADERS")) as Record<string, string>;
const body = env("WEBHOOK_BODY");
verifyWebhook(headers, body, [env("WEBHOOK_SECRET")]);
for (const [what, b, secrets] of [
  ["another secret", body, ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]],
  ["an altered body", body + " ", [env("WEBHOOK_SECRET")]],
] as const) {
  let refused = false;
  try {
    verifyWebhook(headers, b, [...secrets]);
  } catch (err) {
    refused = err instanceof WebhookVerificationError;
  }
  check(refused, `verified with ${what}`);
}
const parsed = parseEvent(body);
check(parsed.known && parsed.event.type === "call.ended" && parsed.event.data.end_reason === "declined", `parsed ${JSON.stringify(parsed)}`);
console.log("ok");
