// Typed uses of the generated types that `tsc --strict` must accept (scripts/check-sdk.sh):
// if a generator change or a contract change loses a field (an event's data typed as
// Record<string, never>, an error without its message), this file stops compiling.
import type { components, operations, paths } from "../src/schema.js";

type Schemas = components["schemas"];

// GET /v1/events answers events whose `data` narrows on `type`.
type EventList = paths["/v1/events"]["get"]["responses"][200]["content"]["application/json"];

export function describe(event: Schemas["Event"]): string {
  switch (event.type) {
    case "call.incoming":
      return `${event.data.call_id} rings on ${event.data.line_id}; answer by ${event.data.answer_by}, room ${event.data.session.session_id}`;
    case "call.answered":
      return `${event.data.call_id} answered at ${event.data.answered_at} (${event.data.handled_by})`;
    case "call.ended":
      return `${event.data.call_id} ended: ${event.data.end_reason} after ${event.data.duration_ms} ms`;
    case "call.transcript":
      return `${event.data.call_id} #${event.data.sequence} ${event.data.speaker}: ${event.data.text}`;
    case "call.analyzed":
      return `${event.data.call_id} analysed: ${event.data.status} ${event.data.summary ?? event.data.error ?? ""}`;
    case "recording.ready":
      return `${event.data.call_id} recorded: ${event.data.duration_ms} ms, ${event.data.size_bytes} bytes of ${event.data.format}`;
    case "campaign.completed":
      return `${event.data.campaign_id} completed: ${event.data.counts.answered} of ${event.data.recipients} answered`;
  }
}

export function describeAll(list: EventList): string[] {
  return list.data.map(describe);
}

// Every per-status error keeps the whole shape.
export function explain(e: Schemas["Error409"] | Schemas["Error404"]): string {
  const param: string | undefined = e.error.param;
  return `${e.error.type}/${e.error.code}: ${e.error.message} (${param ?? "-"}) ${e.error.request_id}`;
}

// Request bodies are named schemas, and each operation has a readable id.
export const activate: Schemas["AssistantActivate"] = { version_id: "ver_01jd0000000000000000000000" };
export const answer: operations["answerCall"]["requestBody"]["content"]["application/json"] = { action: "accept" };
// Hand a ringing call to the line's assistant, with values for its placeholders.
export const handToAssistant: Schemas["CallAnswerRequest"] = { action: "assistant", variables: { caller_name: "Ada" } };
export const versionVariables = (v: Schemas["AssistantVersion"]): string[] => v.variables;

// A field with a default in the contract is optional in requests: the smallest session
// create is its one required field (openapi-typescript runs with --default-non-nullable
// false), while a session as answered has every field.
export const smallestSession: Schemas["SessionCreate"] = { platform_handle: "+15550100002" };
export const sessionMedia = (s: Schemas["SessionCreated"]): "video" | "audio" => s.media;
