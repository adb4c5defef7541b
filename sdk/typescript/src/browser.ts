// What a browser page may import from @bridgeline/sdk: the contract's types, to read what
// your server hands the page (a session's rtc_url and participant_token), and nothing
// that holds or sends the API key. The page joins the room with livekit-client.
import type { components } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The contract's schemas by name: `Schemas["SessionCreated"]`... */
export type Schemas = components["schemas"];

/** What a client needs to join a session's room: give the page these fields, never the API key. */
export type JoinInfo = Pick<Schemas["SessionCreated"], "session_id" | "rtc_url" | "participant_token" | "expires_at">;
