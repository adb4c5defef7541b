package stores_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
)

// quietRooms stands in for LiveKit where only the store's requests are counted: it makes
// rooms, dispatches and tokens without touching a table.
type quietRooms struct{ session.NoRooms }

func (quietRooms) CreateRoom(_ context.Context, spec rtc.RoomSpec) (rtc.Room, error) {
	return rtc.Room{SID: "RM_" + spec.Name, Name: spec.Name}, nil
}
func (quietRooms) DeleteRoom(context.Context, string) error                  { return nil }
func (quietRooms) Dispatch(context.Context, string, rtc.AgentDispatch) error { return nil }
func (quietRooms) ParticipantToken(g rtc.Grant) (rtc.Token, error) {
	return rtc.Token{JWT: "token", Identity: g.Identity, ExpiresAt: time.Now().Add(10 * time.Minute)}, nil
}
func (quietRooms) Participants(context.Context, string) ([]rtc.Participant, error) { return nil, nil }
func (quietRooms) SubscribeOnly(context.Context, string, string) error             { return nil }
func (quietRooms) SendData(context.Context, string, string, []byte) error          { return nil }

// quietPlatform stands in for the calling platform (the sim's rules, no calls placed).
type quietPlatform struct{ sim.Kind }

func (quietPlatform) Dial(context.Context, platform.DialRequest) (string, error) {
	return ident.New("simcall"), nil
}
func (quietPlatform) Answer(context.Context, string, string, platform.Room) error { return nil }
func (quietPlatform) Reject(context.Context, string, string) error                { return nil }
func (quietPlatform) Hangup(context.Context, string) error                        { return nil }

// BenchmarkCallCapacity: the DynamoDB requests and capacity units of one inbound
// assistant call, as the control plane's functions make them on DynamoDB Local: the
// platform's inbound notification (line, assistant version, session and call with the
// account's slot), the worker's reports (media verified, greeting, ended with a
// ten-turn transcript), the caller's hang-up; then a minute of the sweeper (30 ticks,
// idle). LiveKit and the platform are stand-ins that touch no table. Webhook deliveries
// and API reads are counted apart in docs/deploy.md.
//
//	go test -run '^$' -bench BenchmarkCallCapacity -benchtime 20x ./e2e/stores/
func BenchmarkCallCapacity(b *testing.B) {
	ctx := context.Background()
	s, meter := meteredDynamo(b)
	plats, err := platform.NewRegistry(quietPlatform{})
	if err != nil {
		b.Fatal(err)
	}
	svc, err := session.New(s, quietRooms{}, session.WithPlatforms(plats), session.WithLog(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	acct, _, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx, "Capacity Co", true)
	if err != nil {
		b.Fatal(err)
	}
	asvc := &assistant.Service{Store: s, Now: time.Now}
	name, prompt, greeting := "Front desk", "You answer the phone for a flower shop. Be brief and kind.", "Hello, this is the flower shop. How can I help?"
	a, err := asvc.Create(ctx, acct.ID, assistant.Fields{Name: &name, SystemPrompt: &prompt, Greeting: &greeting, AvatarID: &persona.Avatars[0].ID})
	if err != nil {
		b.Fatal(err)
	}
	for range 5 { // published a few times: a call reads one version whatever the count
		if a, err = asvc.Publish(ctx, acct.ID, a.ID); err != nil {
			b.Fatal(err)
		}
	}
	lsvc := &line.Service{Store: s, Assistants: s, Now: time.Now}
	l, err := lsvc.Provision(ctx, acct.ID, sim.Name, "+15550109999", "Shop")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := lsvc.Assign(ctx, acct.ID, l.ID, a.ID); err != nil {
		b.Fatal(err)
	}
	turns := make([]persona.Turn, 10)
	for i := range turns {
		sp := persona.SpeakerAssistant
		if i%2 == 1 {
			sp = persona.SpeakerCaller
		}
		turns[i] = persona.Turn{Speaker: sp, Text: "Do you have red roses for a birthday on Saturday, and can you deliver them in the morning?",
			StartMS: int64(i * 6000), EndMS: int64(i*6000 + 4000)}
	}
	step := func(what string, f func() error) {
		if err := f(); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	meter.take()
	meter.takeParts()
	callParts := map[string]float64{}
	var calls, reqs int
	var rcu, wcu float64
	for b.Loop() {
		pcid := ident.New("simcall")
		step("inbound", func() error {
			return svc.HandleNotification(ctx, sim.Name, platform.Notification{ID: ident.New("ntf"), Event: platform.EventInbound,
				PlatformCallID: pcid, From: "+15551230000", To: l.Handle, Media: platform.MediaAudio, At: time.Now()})
		})
		q, r, w := meter.take()
		calls, reqs, rcu, wcu = calls+1, reqs+q, rcu+r, wcu+w
		parts := meter.takeParts()
		c, err := s.CallByPlatformID(ctx, sim.Name, pcid)
		if err != nil || c.SessionID == "" {
			b.Fatalf("the inbound call = %+v, %v; want it bridged into a session", c, err)
		}
		meter.take() // the lookup is the benchmark's, not the call's
		meter.takeParts()
		for k, v := range parts {
			callParts[k] += v
		}
		report := func(kind string, mod func(*persona.Report)) {
			r := persona.Report{Kind: kind, CallID: c.ID, SessionID: c.SessionID, At: time.Now()}
			if mod != nil {
				mod(&r)
			}
			step(kind, func() error { return svc.HandleReport(ctx, r) })
		}
		report(persona.ReportMediaVerified, nil)
		g := int64(520)
		report(persona.ReportGreeting, func(r *persona.Report) { r.Metrics.FirstGreetingMS = &g })
		step("hangup", func() error {
			return svc.HandleNotification(ctx, sim.Name, platform.Notification{ID: ident.New("ntf"), Event: platform.EventHangup,
				PlatformCallID: pcid, CallID: c.ID, At: time.Now()})
		})
		n := 5
		report(persona.ReportEnded, func(r *persona.Report) {
			r.EndReason, r.Transcript, r.Metrics.FirstGreetingMS, r.Metrics.Turns = persona.EndCallerHangup, turns, &g, &n
		})
		q, r, w = meter.take()
		reqs, rcu, wcu = reqs+q, rcu+r, wcu+w
		for k, v := range meter.takeParts() {
			callParts[k] += v
		}
	}
	parts := callParts
	names := slices.Sorted(maps.Keys(parts))
	fmt.Printf("capacity units of one call by table and index (%d calls):\n", calls)
	for _, n := range names {
		fmt.Printf("  %-40s %6.1f\n", n, parts[n]/float64(calls))
	}
	b.ReportMetric(float64(reqs)/float64(calls), "requests/call")
	b.ReportMetric(rcu/float64(calls), "RCU/call")
	b.ReportMetric(wcu/float64(calls), "WCU/call")

	// A minute of the AWS sweeper, idle: 30 ticks.
	for range 30 {
		if _, err := svc.Sweep(ctx); err != nil {
			b.Fatal(err)
		}
	}
	q, r, _ := meter.take()
	fmt.Printf("sweeper, a minute idle (30 ticks): %d requests, %.1f RCU as DynamoDB Local counts them (DynamoDB bills an empty query half a unit: %.0f)\n", q, r, float64(q)*0.5)
}
