package awsbus_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	bridgeline "github.com/bridgeline/bridgeline/sdk/go"
	sdkwebhook "github.com/bridgeline/bridgeline/sdk/go/webhook"

	"github.com/bridgeline/bridgeline/events/awsbus"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// TestNewEventsThroughEventBridge: call.answered and call.transcript (issue 19's live
// events) take the AWS path like the others: put on a real (moto) EventBridge bus, through
// the template's rule to the queue, delivered by the webhook-deliver handler to the
// endpoints subscribed to each, where the Go SDK verifies and parses them into their
// types. An endpoint that lists only one of the two gets only that one.
func TestNewEventsThroughEventBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts moto_server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newClients(eventtest.StartMoto(t))
	inf := createInfra(t, ctx, c)
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "n.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps := &webhookendpoint.Service{Store: st, Destinations: egress.Policy{AllowLoopback: true}}
	acct := ident.New("acct")
	both, transcripts, answers := newHook(t, ok200), newHook(t, ok200), newHook(t, ok200)
	for h, events := range map[*hook][]string{both: nil, transcripts: {callevent.TypeCallTranscript}, answers: {callevent.TypeCallAnswered}} {
		url := h.srv.URL
		in := webhookendpoint.Input{URL: &url}
		if events != nil {
			in.Events = &events
		}
		ep, err := eps.Create(ctx, acct, in)
		if err != nil {
			t.Fatal(err)
		}
		h.secret = ep.Secret
	}
	h := &awsbus.Handler{
		Deliverer:   &delivery.Deliverer{Endpoints: eps, Client: delivery.NewClient(egress.Policy{AllowLoopback: true})},
		Subscribers: eps, Log: st, Queue: c.sqs, QueueURL: inf.queueURL, DeadLetterQueueURL: inf.dlqURL,
		MaxDelay: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	golden := func(file string) callevent.Event {
		b, err := os.ReadFile(filepath.Join("..", "callevent", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		return callevent.Event{ID: ident.New("evt"), AccountID: acct, Type: e.Type, CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Data: []byte(e.Data)}
	}
	answered, transcript := golden("call.answered.json"), golden("call.transcript.json")
	if err := (&awsbus.Publisher{Client: c.eb, BusName: inf.bus}).Publish(ctx, []callevent.Event{answered, transcript}); err != nil {
		t.Fatal(err)
	}
	received := func(hk *hook) int {
		hk.mu.Lock()
		defer hk.mu.Unlock()
		return len(hk.ids)
	}
	for deadline := time.Now().Add(30 * time.Second); received(both) < 2 || received(transcripts) < 1 || received(answers) < 1; {
		if time.Now().After(deadline) {
			t.Fatalf("not delivered: both %d, transcripts %d, answers %d", received(both), received(transcripts), received(answers))
		}
		poll(t, ctx, c, inf.queueURL, h)
	}
	for i := 0; i < 3; i++ { // anything more would have come by now
		poll(t, ctx, c, inf.queueURL, h)
	}
	check := func(name string, hk *hook, want ...callevent.Event) {
		hk.mu.Lock()
		defer hk.mu.Unlock()
		for _, err := range hk.errs {
			t.Errorf("%s: verify: %v", name, err)
		}
		if len(hk.ids) != len(want) {
			t.Errorf("%s got %v, want %d events", name, hk.ids, len(want))
			return
		}
		for i, w := range want {
			if hk.ids[i] != w.ID && (len(want) < 2 || hk.ids[1-i] != w.ID) {
				t.Errorf("%s got %v, want %s", name, hk.ids, w.ID)
			}
		}
		for i, body := range hk.bodies {
			if err := sdkwebhook.Verify(hk.headers[i], body, time.Now(), hk.secret); err != nil {
				t.Errorf("%s: the SDK's Verify: %v", name, err)
			}
			ev, err := sdkwebhook.Parse(body)
			if err != nil {
				t.Errorf("%s: Parse: %v", name, err)
				continue
			}
			switch ev := ev.(type) {
			case *bridgeline.CallTranscriptEvent:
				if ev.Data.Speaker != "caller" || ev.Data.Text != "where is my order" || ev.Data.Sequence != 2 {
					t.Errorf("%s: call.transcript data %+v", name, ev.Data)
				}
			case *bridgeline.CallAnsweredEvent:
				if ev.Data.CallId == "" {
					t.Errorf("%s: call.answered data %+v", name, ev.Data)
				}
			default:
				t.Errorf("%s: parsed %T", name, ev)
			}
		}
	}
	check("the endpoint of every type", both, answered, transcript)
	check("the call.transcript endpoint", transcripts, transcript)
	check("the call.answered endpoint", answers, answered)
}

func ok200(int) int { return 200 }
