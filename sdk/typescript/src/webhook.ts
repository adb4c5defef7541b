// Verifying Bridgeline's signed events in Node (Standard Webhooks: HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>" with the endpoint's whsec_ secret), and reading
// them into the contract's types, narrowed by `type`.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** A delivered event: the envelope with its type's data; `type` narrows `data`. */
export type WebhookEvent =
  | { id: string; type: "call.incoming"; created_at: string; data: Schemas["CallIncomingData"] }
  | { id: string; type: "call.answered"; created_at: string; data: Schemas["CallAnsweredData"] }
  | { id: string; type: "call.ended"; created_at: string; data: Schemas["CallEndedData"] }
  | { id: string; type: "call.transcript"; created_at: string; data: Schemas["CallTranscriptData"] }
  | { id: string; type: "call.analyzed"; created_at: string; data: Schemas["CallAnalyzedData"] }
  | { id: string; type: "recording.ready"; created_at: string; data: Schemas["RecordingReadyData"] }
  | { id: string; type: "campaign.completed"; created_at: string; data: Schemas["CampaignCompletedData"] };

export class WebhookVerificationError extends Error {}

/** How far a delivery's timestamp may be from now, in seconds. */
export const toleranceSeconds = 300;

/**
 * Throws WebhookVerificationError unless `body` (the raw bytes, not re-serialised JSON) is
 * signed by one of `secrets` (two during a rotation: pass both) within the tolerance.
 */
export function verifyWebhook(
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string | Uint8Array,
  secrets: string[],
  nowMs: number = Date.now(),
): void {
  const get = (name: string): string => {
    const v = headers instanceof Headers ? headers.get(name) : headers[name];
    return (Array.isArray(v) ? v[0] : v) ?? "";
  };
  const id = get("webhook-id");
  const ts = get("webhook-timestamp");
  const sigs = get("webhook-signature");
  if (!id || !ts || !sigs) throw new WebhookVerificationError("missing webhook headers");
  const sec = Number(ts);
  if (!Number.isInteger(sec) || Math.abs(nowMs / 1000 - sec) > toleranceSeconds) {
    throw new WebhookVerificationError(`timestamp ${ts} outside the tolerance`);
  }
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
  for (const secret of secrets) {
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
    const want = createHmac("sha256", key).update(`${id}.${ts}.`).update(bytes).digest();
    for (const s of sigs.split(" ")) {
      const [v, b64] = s.split(",", 2);
      if (v !== "v1" || b64 === undefined) continue;
      const got = Buffer.from(b64, "base64");
      if (got.length === want.length && timingSafeEqual(got, want)) return;
    }
  }
  throw new WebhookVerificationError("no valid signature");
}

/**
 * Reads a verified delivery. An event type this version does not know (new types are
 * additive) is returned as `{ known: false }`, so a receiver acknowledges it.
 */
export function parseEvent(body: string): { known: true; event: WebhookEvent } | { known: false; type: string } {
  const v = JSON.parse(body) as { type?: unknown };
  if (v.type === "call.incoming" || v.type === "call.answered" || v.type === "call.ended" || v.type === "call.transcript") {
    return { known: true, event: v as WebhookEvent };
  }
  return { known: false, type: String(v.type) };
}
