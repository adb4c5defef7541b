// Package bridgeline is the Go SDK of the Bridgeline API: hosted video sessions, AI
// assistants that answer calls, lines, call records and signed webhook events.
//
// Start with New and the Client it returns. Each operation of the API is a method named
// after it that answers the object, or an error (an *APIError when the API said no):
//
//	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	a, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: "Front desk"})
//
// The API key is a secret: use the Client on your server only. What a browser needs to
// join a call is the session payload CreateSession answers (RtcUrl, ParticipantToken),
// scoped to one room and valid for minutes.
//
// Every POST carries an Idempotency-Key (a fresh one, or yours: WithIdempotencyKey) and is
// retried with the same key and bytes after a network error, a 409
// idempotency_key_in_use, a 429 or a 5xx, so a retry is never applied twice (Options).
// Lists come a page at a time (ListAssistants...) or whole, fetched as you walk them
// (Assistants... return an Iter). Package webhook verifies and parses the events
// Bridgeline posts to your endpoints; Client.Events lists the same events.
//
// The request and response types (Assistant, SessionCreate, Line...) and
// Client.Generated, the client behind the typed methods, are generated from the
// contract, openapi.yaml, by oapi-codegen; optional fields are pointers (Ptr makes one).
package bridgeline
