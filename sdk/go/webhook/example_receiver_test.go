package webhook_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	"github.com/bridgeline/bridgeline/sdk/go/webhook"
)

// receiver is a webhook endpoint: it verifies each delivery with the endpoint's secrets
// (two while you rotate), parses it and hands call.ended events to ended.
func receiver(ended chan<- *bridgeline.CallEndedEvent, secrets ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		// Verify the raw bytes, before decoding: re-encoded JSON would not match.
		if err := webhook.Verify(r.Header, body, time.Now(), secrets...); err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		ev, err := webhook.Parse(body)
		if err != nil {
			http.Error(w, "unreadable event", http.StatusBadRequest)
			return
		}
		// Retries and redeliveries repeat ev.EventID(): process each id once.
		switch ev := ev.(type) {
		case *bridgeline.CallIncomingEvent:
			// On a customer_decides line: answer within ev.Data.AnswerBy.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"action": "accept"}`)
			return
		case *bridgeline.CallEndedEvent:
			ended <- ev
		case *bridgeline.UnknownEvent:
			// A type newer than this SDK: acknowledge it.
		}
		w.WriteHeader(http.StatusNoContent) // any 2xx within 15 s
	}
}

// A receiver, registered as a webhook endpoint, gets call.ended when a session ends.
func Example_receiver() {
	ctx := context.Background()
	c, err := bridgeline.New(os.Getenv("BRIDGELINE_API_URL"), os.Getenv("BRIDGELINE_API_KEY"), bridgeline.Options{})
	if err != nil {
		log.Fatal(err)
	}

	// Your endpoint's address: here a port on this machine, which the local stack may
	// deliver to (a deployment delivers only to public https URLs).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	// Register it once. Its secret is in this answer only: keep it with your server's
	// configuration.
	ep, err := c.CreateWebhookEndpoint(ctx, bridgeline.WebhookEndpointCreate{
		Url:    "http://" + ln.Addr().String() + "/hooks",
		Events: &[]string{"call.incoming", "call.ended"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.DeleteWebhookEndpoint(ctx, ep.Id)
	ended := make(chan *bridgeline.CallEndedEvent, 16)
	go http.Serve(ln, receiver(ended, *ep.Secret))

	// A session that ends: its call.ended arrives, verified.
	s, err := c.CreateSession(ctx, bridgeline.SessionCreate{PlatformHandle: "+15557654321"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := c.DeleteSession(ctx, s.SessionId); err != nil {
		log.Fatal(err)
	}
	for {
		select {
		case ev := <-ended:
			if ev.Data.CallId == s.CallId {
				fmt.Println("call.ended:", ev.Data.EndReason, "by", ev.Data.EndedBy)
				return
			}
		case <-time.After(30 * time.Second):
			log.Fatal("no call.ended within 30 s")
		}
	}
	// Output:
	// call.ended: deleted by customer
}
