package bridgeline_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
)

// An assistant answers a line's inbound calls: create its draft, publish version 1 and
// assign it to the line.
func Example() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}

	a, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{
		Name:         "Front desk",
		SystemPrompt: bridgeline.Ptr("You are the front desk of Acme Dental. Answer in one or two sentences."),
		Greeting:     bridgeline.Ptr("Hello, Acme Dental, how can I help?"),
		AvatarId:     bridgeline.Ptr("ava_iris"), // from c.ListAvatars
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err = c.PublishAssistant(ctx, a.Id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: version %d published and active\n", a.Name, a.VersionCount)

	// The line: here the local stack's first sim line.
	var line *bridgeline.Line
	it := c.Lines(ctx, nil)
	for it.Next() {
		if l := it.Current(); l.Handle == "+15550100001" {
			line = &l
		}
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	if line == nil {
		log.Fatal("no line +15550100001")
	}
	line, err = c.AssignLineAssistant(ctx, line.Id, bridgeline.LineAssign{AssistantId: a.Id})
	if err != nil {
		log.Fatal(err)
	}
	// The assistant answers while the line's inbound_mode is assistant (customer_decides
	// asks your server first, disabled declines).
	if line.InboundMode != bridgeline.InboundModeAssistant {
		line, err = c.UpdateLine(ctx, line.Id, bridgeline.LineUpdate{InboundMode: bridgeline.Ptr(bridgeline.InboundModeAssistant)})
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("line %s: inbound_mode %s, assistant %s\n", line.Handle, line.InboundMode, a.Name)
	// Output:
	// Front desk: version 1 published and active
	// line +15550100001: inbound_mode assistant, assistant Front desk
}

// A session: Bridgeline dials a number into a new room and answers what your client needs
// to join it.
func ExampleClient_CreateSession() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}

	s, err := c.CreateSession(ctx, bridgeline.SessionCreate{
		PlatformHandle: "+15557654321", // on the local stack, the sim platform answers it
		Media:          bridgeline.Ptr(bridgeline.SessionCreateMediaVideo),
		Metadata:       &bridgeline.Metadata{"order_id": "6735"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Hand s.RtcUrl and s.ParticipantToken to your client (any LiveKit SDK joins with
	// them); the API key stays on your server.
	fmt.Println("joins with a token:", s.RtcUrl != "" && s.ParticipantToken != "")

	// The session is active once the dialled party answers.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got, err := c.GetSession(ctx, s.SessionId)
		if err != nil {
			log.Fatal(err)
		}
		if got.Status == bridgeline.SessionStatusActive || time.Now().After(deadline) {
			fmt.Println("status:", got.Status)
			break
		}
	}

	// Ending it deletes the room: every client is disconnected.
	ended, err := c.DeleteSession(ctx, s.SessionId)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", ended.Status, *ended.EndReason)
	// Output:
	// joins with a token: true
	// status: active
	// status: ended deleted
}

// A web call: mode assistant and no PlatformHandle. Bridgeline dials nothing; the browser
// that joins with the returned token is the caller, face to face with the assistant.
func ExampleClient_CreateSession_webCall() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// A published assistant to talk to (Example shows each step).
	a, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: "Web desk",
		SystemPrompt: bridgeline.Ptr("You are the front desk of Acme. Answer in one or two sentences."),
		Greeting:     bridgeline.Ptr("Hello, this is Acme. How can I help?"), AvatarId: bridgeline.Ptr("ava_iris")})
	if err != nil {
		log.Fatal(err)
	}
	if a, err = c.PublishAssistant(ctx, a.Id); err != nil {
		log.Fatal(err)
	}

	s, err := c.CreateSession(ctx, bridgeline.SessionCreate{
		Mode:        bridgeline.Ptr(bridgeline.SessionCreateModeAssistant),
		AssistantId: &a.Id, // and no PlatformHandle: a web call
		Media:       bridgeline.Ptr(bridgeline.SessionCreateMediaVideo),
		Variables:   &map[string]string{"caller_name": "Ada"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Send the visitor's browser to *s.JoinUrl, Bridgeline's hosted page for the call
	// (the token rides in its fragment), or hand s.RtcUrl and s.ParticipantToken to your
	// own page: that token publishes the camera and the microphone.
	fmt.Println("status:", s.Status, "| caller's token:", !s.WatchOnly, "| hosted page:", strings.Contains(*s.JoinUrl, "/join/call#token="))

	// The call is answered when the browser joins, and ends when it leaves. Ending it
	// from your server deletes the room at once.
	ended, err := c.DeleteSession(ctx, s.SessionId)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("status:", ended.Status, *ended.EndReason)
	// Output:
	// status: ringing | caller's token: true | hosted page: true
	// status: ended deleted
}

// Lists come newest first, a page at a time; an Iter fetches the next page when the loop
// reaches it.
func ExampleClient_Assistants() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"Ada", "Grace", "Linus"} {
		if _, err := c.CreateAssistant(ctx, bridgeline.AssistantCreate{Name: name}); err != nil {
			log.Fatal(err)
		}
	}

	it := c.Assistants(ctx, &bridgeline.ListAssistantsParams{Limit: bridgeline.Ptr(2)})
	for n := 0; n < 3 && it.Next(); n++ { // the three newest: two pages of two
		fmt.Println(it.Current().Name)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Linus
	// Grace
	// Ada
}

// An error answer is an *APIError: branch on its Code.
func ExampleAPIError() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}

	_, err = c.GetAssistant(ctx, "asst_01jd3f4g5h6j7k8m9n0p1q2r3t")
	var e *bridgeline.APIError
	if errors.As(err, &e) && e.Code == "resource_not_found" {
		fmt.Println(e.Status, e.Code, "on", e.Param)
	}
	// Output:
	// 404 resource_not_found on id
}
