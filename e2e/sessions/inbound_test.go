package sessions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/rtc"
	"github.com/bridgeline/bridgeline/shared/session"
)

// placeCall places an inbound sim call on a handle through the sim's HTTP API.
func placeCall(t *testing.T, st *harness.Stack, to, media string) platformsim.Call {
	t.Helper()
	var c platformsim.Call
	status, raw, err := st.Request(http.MethodPost, "/sim/calls", map[string]any{"from": "+15551230000", "to": to, "media": media}, "")
	if err != nil || status != http.StatusCreated {
		t.Fatalf("POST /sim/calls = %d %s, %v", status, raw, err)
	}
	json.Unmarshal(raw, &c)
	return c
}

// callOf finds the call record of a sim call (a rejected call never learns its id).
func callOf(t *testing.T, st *harness.Stack, sc platformsim.Call) callObj {
	t.Helper()
	c, err := st.Store.CallByPlatformID(context.Background(), platformsim.Name, sc.ID)
	if err != nil {
		t.Fatalf("no call record for %s: %v", sc.ID, err)
	}
	return getCall(t, st, c.ID)
}

// waitSimCall waits for the sim call to reach a status and returns it.
func waitSimCall(t *testing.T, st *harness.Stack, id, status string) platformsim.Call {
	t.Helper()
	var c platformsim.Call
	harness.WaitFor(t, 20*time.Second, "sim call "+status, func() bool {
		c, _ = st.Sim.Get(id)
		return c.Status == status
	})
	return c
}

// incomingReceiver is a receiver of the tenant's call.incoming, through a webhook endpoint
// it creates; the test says how it answers (AnswerIncoming).
func incomingReceiver(t *testing.T, st *harness.Stack) *eventtest.Receiver {
	t.Helper()
	recv := eventtest.NewReceiver(t)
	var ep struct {
		Secret string `json:"secret"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/webhook_endpoints", map[string]any{"url": recv.URL, "events": []string{"call.incoming"}}, &ep),
		http.StatusCreated, "create endpoint")
	recv.SetSecret(ep.Secret)
	return recv
}

func patchLine(t *testing.T, st *harness.Stack, handle string, body map[string]any) {
	t.Helper()
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/lines/"+st.Lines[handle].ID, body, nil), http.StatusOK, "PATCH line")
}

// TestInboundDeclined: a disabled line, and an assistant line without an assistant,
// decline the call and record why.
func TestInboundDeclined(t *testing.T) {
	st := tenant(t)
	patchLine(t, st, st.Handles[1], map[string]any{"inbound_mode": "disabled"})
	for handle, reason := range map[string]string{st.Handles[0]: call.ReasonNoAssistant, st.Handles[1]: call.ReasonLineDisabled} {
		sc := placeCall(t, st, handle, "video")
		got := waitSimCall(t, st, sc.ID, platformsim.StatusRejected)
		c := callOf(t, st, got)
		if c.Status != call.StatusDeclined || str(c.EndReason) != reason || c.HandledBy != call.HandledByNone ||
			c.Direction != call.Inbound || c.SessionID != nil {
			t.Errorf("%s: call record = %+v, want declined for %s", handle, c, reason)
		}
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, c.ID)
	}
	// An unknown handle is rejected without a record.
	sc := placeCall(t, st, "+15559999999", "audio")
	waitSimCall(t, st, sc.ID, platformsim.StatusRejected)
}

// dispatchedJob reads the persona job LiveKit holds for the session's room.
func dispatchedJob(t *testing.T, st *harness.Stack, room string) persona.Job {
	t.Helper()
	cfg := st.LiveKit.Config()
	ds := lksdk.NewAgentDispatchServiceClient(st.LiveKit.HTTPURL(), cfg.APIKey, cfg.APISecret)
	// The dispatch is made as the session is answered; under load the listing may not
	// show it yet, or show it before its agent name, for a moment.
	var last []*livekit.AgentDispatch
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := ds.ListDispatch(context.Background(), &livekit.ListAgentDispatchRequest{Room: room})
		if err != nil {
			t.Fatal(err)
		}
		last = list.AgentDispatches
		for _, d := range last {
			if d.AgentName == persona.AgentName {
				var j persona.Job
				if err := json.Unmarshal([]byte(d.Metadata), &j); err != nil {
					t.Fatalf("job metadata %q: %v", d.Metadata, err)
				}
				return j
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("room %s has no %s dispatch 10 s on: %v", room, persona.AgentName, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInboundCustomerDecides: call.incoming goes to the account's endpoint with the
// session payload; an accept bridges the caller in (and a client joining with the
// payload hears them); a decline rejects the call; no endpoint at all declines at the
// deadline.
func TestInboundCustomerDecides(t *testing.T) {
	st := tenant(t)
	patchLine(t, st, st.Handles[0], map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 5,
		"metadata": map[string]string{"team": "sales"}})

	// No endpoint subscribed: nobody can be asked, the call is declined as timed out.
	sc := placeCall(t, st, st.Handles[0], "audio")
	sc = waitSimCall(t, st, sc.ID, platformsim.StatusRejected)
	if c := callOf(t, st, sc); c.Status != call.StatusDeclined || str(c.EndReason) != call.ReasonDecisionTimeout {
		t.Errorf("unasked call = %+v, want declined, decision_timeout", c)
	} else if sc.CallID != c.ID {
		t.Errorf("the declined sim call names call %q, want %q (/sim/calls/{id} shows call_id)", sc.CallID, c.ID)
	}

	recv := incomingReceiver(t, st)
	action := "accept"
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return action })

	sc = placeCall(t, st, st.Handles[0], "audio")
	sc = waitSimCall(t, st, sc.ID, platformsim.StatusAnswered)
	in := recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, eventtest.ForCall(sc.CallID))
	var data callevent.CallIncoming
	json.Unmarshal(in.Event.Data, &data)
	if data.Session.CallID != sc.CallID || data.Session.ParticipantToken == "" || data.From != "+15551230000" {
		t.Fatalf("call.incoming data = %+v", data)
	}
	// The line's metadata is echoed; the new inbound call has none yet.
	if len(data.LineMetadata) != 1 || data.LineMetadata["team"] != "sales" || data.Metadata == nil || len(data.Metadata) != 0 {
		t.Errorf("call.incoming metadata = %v, line_metadata = %v; want {} and {team: sales}", data.Metadata, data.LineMetadata)
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/calls/"+sc.CallID, map[string]any{"metadata": map[string]string{"ticket": "T-1042"}}, nil),
		http.StatusOK, "set the call's metadata")
	cl := joinClient(t, data.Session.RTCURL, data.Session.ParticipantToken)
	harness.WaitFor(t, 20*time.Second, "client hears the caller", func() bool { return !cl.FirstSound().IsZero() })
	c := getCall(t, st, sc.CallID)
	if c.Status != call.StatusActive || c.HandledBy != call.HandledByCustomer {
		t.Errorf("accepted call = %+v", c)
	}
	var full map[string]any
	st.Do(t, http.MethodGet, "/v1/calls/"+sc.CallID, nil, &full)
	if full["decision"] != "accept" || full["decision_source"] != "webhook_response" {
		t.Errorf("decision = %v/%v, want accept/webhook_response", full["decision"], full["decision_source"])
	}
	cl.Leave()
	waitStatus(t, st, data.Session.SessionID, session.StatusEnded)
	waitSimCall(t, st, sc.ID, platformsim.StatusEnded)
	// call.ended echoes the call's metadata and its session's (an inbound session has none).
	var ended callevent.CallEnded
	json.Unmarshal(eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, sc.CallID).Data, &ended)
	if ended.Metadata["ticket"] != "T-1042" || len(ended.Metadata) != 1 || ended.SessionMetadata == nil || len(ended.SessionMetadata) != 0 {
		t.Errorf("call.ended metadata = %v, session_metadata = %v; want {ticket: T-1042} and {}", ended.Metadata, ended.SessionMetadata)
	}

	action = "decline"
	sc = placeCall(t, st, st.Handles[0], "video")
	sc = waitSimCall(t, st, sc.ID, platformsim.StatusRejected)
	c = callOf(t, st, sc)
	if c.Status != call.StatusDeclined || str(c.EndReason) != call.ReasonDeclined || str(c.EndedBy) != call.EndedByCustomer {
		t.Errorf("declined call = %+v", c)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, c.ID)
}

// TestDeclineThroughTheAPI: POST /v1/calls/{id}/answer with decline answers 200 with the
// whole call object, showing the decision at once; the caller is rejected and the call
// record keeps the decision and its source.
func TestDeclineThroughTheAPI(t *testing.T) {
	st := tenant(t)
	patchLine(t, st, st.Handles[0], map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 15})
	recv := incomingReceiver(t, st)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" }) // the answer comes through the API

	sc := placeCall(t, st, st.Handles[0], "video")
	in := recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, func(d json.RawMessage) bool {
		var c callevent.CallIncoming
		json.Unmarshal(d, &c)
		return c.To == st.Handles[0]
	})
	var data callevent.CallIncoming
	json.Unmarshal(in.Event.Data, &data)

	var got map[string]any
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/calls/"+data.CallID+"/answer", map[string]any{"action": "decline"}, &got),
		http.StatusOK, "decline")
	want := map[string]any{"id": data.CallID, "object": "call", "direction": "inbound", "line_id": st.Lines[st.Handles[0]].ID,
		"from": "+15551230000", "to": st.Handles[0], "media": "video", "handled_by": "customer",
		"session_id": data.Session.SessionID, "decision": "decline", "decision_source": "api"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("decline answer %s = %v, want %v", k, got[k], v)
		}
	}
	for _, k := range []string{"status", "started_at", "answered_at", "ended_at", "duration_ms", "end_reason", "ended_by", "assistant_id", "version_id", "transcript", "metrics"} {
		if _, ok := got[k]; !ok {
			t.Errorf("decline answer has no %q: %v", k, got)
		}
	}
	// A retry answers the same call again.
	var again map[string]any
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/calls/"+data.CallID+"/answer", map[string]any{"action": "decline"}, &again),
		http.StatusOK, "decline again")
	if again["id"] != data.CallID || again["decision"] != "decline" || again["direction"] != "inbound" {
		t.Errorf("repeated decline = %v", again)
	}

	waitSimCall(t, st, sc.ID, platformsim.StatusRejected)
	c := waitRecord(t, st, data.CallID, "the declined call", func(c recordObj) bool { return c.Status == call.StatusDeclined })
	var full map[string]any
	st.Do(t, http.MethodGet, "/v1/calls/"+data.CallID, nil, &full)
	if str(c.EndReason) != call.ReasonDeclined || full["decision"] != "decline" || full["decision_source"] != "api" {
		t.Errorf("call record = %v, want declined by the API", full)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, data.CallID)
}

// crashingRooms panics in the first CreateRoom once crash is set: the handler dies at
// that step as a crashed process would, after the inbound call was saved ringing and
// before its room exists. The API's recoverer answers 500, and the sim redelivers.
type crashingRooms struct {
	session.Rooms
	crash *atomic.Bool
}

func (r crashingRooms) CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error) {
	if r.crash.CompareAndSwap(true, false) {
		panic("injected crash before CreateRoom")
	}
	return r.Rooms.CreateRoom(ctx, spec)
}

// TestInboundRedeliveryResumes: an inbound assistant call whose first delivery died after
// the call was recorded is carried on by the platform's redelivery (room made, caller
// bridged, session active), recorded once; a further redelivery changes nothing.
func TestInboundRedeliveryResumes(t *testing.T) {
	var crash atomic.Bool
	st := harness.Start(t, harness.Options{DispatchTimeout: time.Minute,
		WrapRooms: func(r session.Rooms) session.Rooms { return crashingRooms{r, &crash} }})
	publishAssistant(t, st, "Front desk", "Hello.", "ava_iris")
	crash.Store(true)
	sc := ring(t, st, "audio", platformsim.PartyOptions{})
	if crash.Load() {
		t.Fatal("the call was answered without reaching CreateRoom: the crash was not injected")
	}
	c, err := st.Store.CallByPlatformID(context.Background(), platformsim.Name, sc.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := waitRecord(t, st, c.ID, "the resumed call answered", func(r recordObj) bool { return r.Status == call.StatusActive })
	ses := getSession(t, st, c.SessionID)
	if ses.Status != session.StatusActive || ses.Mode != session.ModeAssistant {
		t.Errorf("session after the redelivery: status %s mode %s, want active assistant", ses.Status, ses.Mode)
	}
	var list struct{ Data []sessionObj }
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/sessions", nil, &list), http.StatusOK, "GET sessions")
	if len(list.Data) != 1 {
		t.Errorf("sessions after the crash and the redelivery = %d, want 1", len(list.Data))
	}

	// Delivered once more, the notification finds the call bridged and changes nothing.
	before, err := st.Store.GetCall(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Service.HandleNotification(context.Background(), platformsim.Name, platform.Notification{Event: platform.EventInbound,
		PlatformCallID: sc.ID, From: sc.From, To: sc.To, Media: sc.Media}); err != nil {
		t.Fatal(err)
	}
	after, err := st.Store.GetCall(context.Background(), c.ID)
	if err != nil || after.Revision != before.Revision {
		t.Errorf("call after another redelivery: revision %d (%v), want %d unchanged", after.Revision, err, before.Revision)
	}
	hangupSim(t, st, sc.ID)
	waitRecord(t, st, got.ID, "the call ended", func(r recordObj) bool { return r.Status == call.StatusEnded })
}
