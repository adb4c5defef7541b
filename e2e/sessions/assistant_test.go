package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/pipeline"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/report"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// assistantObj is the assistant object as a client reads it.
type assistantObj struct {
	ID              string `json:"id"`
	ActiveVersionID string `json:"active_version_id"`
}

// recordObj is the call record with everything an assistant call fills in.
type recordObj struct {
	callObj
	AssistantID *string          `json:"assistant_id"`
	StartedAt   string           `json:"started_at"`
	EndedAt     *string          `json:"ended_at"`
	Metrics     *persona.Metrics `json:"metrics"`
	Turns       []persona.Turn   `json:"-"`
	// AssistantReport: pending, received or missing (assistant calls).
	AssistantReport *string `json:"assistant_report"`
	// Usage: null until the call is over.
	Usage *call.Usage `json:"usage"`
}

// publishAssistant creates and publishes an assistant and assigns it to the tenant's
// first line; it returns the assistant with its active version.
func publishAssistant(t *testing.T, st *harness.Stack, name, greeting, avatarID string) assistantObj {
	t.Helper()
	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": name, "system_prompt": "Answer the phone.",
		"greeting": greeting, "avatar_id": avatarID}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")
	return a
}

// ring places a sim call on the tenant's first line and waits until it is answered; its
// party runs opts.
func ring(t *testing.T, st *harness.Stack, media string, opts platformsim.PartyOptions) platformsim.Call {
	t.Helper()
	sc, err := st.Sim.Place(platformsim.PlaceRequest{From: "+15551230000", To: st.Handles[0], Media: media, Party: opts})
	if err != nil {
		t.Fatal(err)
	}
	return waitSimCall(t, st, sc.ID, platformsim.StatusAnswered)
}

// record reads the call record over the API.
func record(t testing.TB, st *harness.Stack, id string) recordObj {
	t.Helper()
	var c recordObj
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+id, nil, &c), http.StatusOK, "GET call")
	if len(c.Transcript) > 0 && string(c.Transcript) != "null" {
		if err := json.Unmarshal(c.Transcript, &c.Turns); err != nil {
			t.Fatalf("transcript %s: %v", c.Transcript, err)
		}
	}
	return c
}

// waitRecord polls the call record until cond holds.
func waitRecord(t *testing.T, st *harness.Stack, id, what string, cond func(recordObj) bool) recordObj {
	t.Helper()
	var c recordObj
	harness.WaitFor(t, 30*time.Second, what, func() bool {
		c = record(t, st, id)
		return cond(c)
	})
	return c
}

func hangupSim(t *testing.T, st *harness.Stack, simCallID string) {
	t.Helper()
	if status, raw, err := st.Request(http.MethodPost, "/sim/calls/"+simCallID+"/hangup", nil, ""); err != nil || status != http.StatusOK {
		t.Fatalf("POST /sim/calls/%s/hangup = %d %s, %v", simCallID, status, raw, err)
	}
}

// byName is the conversation of the tests' workers: an assistant named hangUpName says
// goodbye after its greeting and hangs up; the others hold the line.
type byName struct{}

const hangUpName = "Hang-up desk"

func (byName) Converse(ctx context.Context, c *pipeline.Call) error {
	if c.Job().Version.Name != hangUpName {
		return pipeline.Listen{}.Converse(ctx, c)
	}
	_, err := c.Say(ctx, "Goodbye.")
	return err
}

// endedReports keeps the ended reports a worker sent.
type endedReports struct {
	mu   sync.Mutex
	reps map[string]persona.Report
}

func (e *endedReports) add(r persona.Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reps == nil {
		e.reps = map[string]persona.Report{}
	}
	e.reps[r.CallID] = r
}

func (e *endedReports) get(callID string) (persona.Report, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.reps[callID]
	return r, ok
}

// TestWorkerReportsEndCalls: how a worker's ended report ends a call, on the real stack
// with a real persona worker. The assistant hanging up is a normal end by the assistant;
// a report that arrives after the control plane ended the call (room_closed or
// terminated, once DELETE removed the room) changes nothing but filling in the
// transcript.
func TestWorkerReportsEndCalls(t *testing.T) {
	st := tenant(t)
	var ended endedReports
	st.StartWorker(t, nil, worker.Options{Conversation: byName{}, OnCallEnded: ended.add})

	t.Run("assistant hangs up", func(t *testing.T) {
		a := publishAssistant(t, st, hangUpName, "Hello there.", "ava_maya")
		sc := ring(t, st, "audio", platformsim.PartyOptions{})
		c := waitRecord(t, st, sc.CallID, "the call to end", func(c recordObj) bool { return c.Status != call.StatusActive })
		if c.Status != call.StatusEnded || str(c.EndReason) != call.ReasonAssistantHangup || str(c.EndedBy) != call.EndedByAssistant ||
			str(c.AssistantID) != a.ID || str(c.VersionID) != a.ActiveVersionID {
			t.Errorf("call record = %+v, want ended by the assistant with assistant_hangup", c)
		}
		c = waitRecord(t, st, sc.CallID, "the transcript", func(c recordObj) bool { return len(c.Turns) == 2 })
		if c.Turns[0].Text != "Hello there." || c.Turns[1].Text != "Goodbye." || c.Metrics == nil || c.Metrics.FirstGreetingMS == nil {
			t.Errorf("transcript %+v, metrics %+v: want the greeting, then goodbye, and the greeting time", c.Turns, c.Metrics)
		}
		waitSimCall(t, st, sc.ID, platformsim.StatusEnded)
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, sc.CallID)
		if r := str(record(t, st, sc.CallID).AssistantReport); r != call.ReportReceived {
			t.Errorf("assistant_report = %q, want received", r)
		}
	})

	t.Run("a report after DELETE changes nothing", func(t *testing.T) {
		publishAssistant(t, st, "Front desk", "Hello there.", "ava_theo")
		sc := ring(t, st, "video", platformsim.PartyOptions{})
		c := waitRecord(t, st, sc.CallID, "the greeting", func(c recordObj) bool { return c.Metrics != nil && c.Metrics.FirstGreetingMS != nil })
		var deleted sessionObj
		harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+*c.SessionID, nil, &deleted), http.StatusOK, "DELETE")
		at := record(t, st, sc.CallID)
		if at.Status != call.StatusEnded || str(at.EndReason) != call.ReasonDeleted || str(at.EndedBy) != call.EndedByCustomer {
			t.Fatalf("after DELETE, call record = %+v", at)
		}
		harness.WaitFor(t, 30*time.Second, "the worker's ended report", func() bool { _, ok := ended.get(sc.CallID); return ok })
		rep, _ := ended.get(sc.CallID)
		// Deleting the room disconnects everyone; the worker may see the caller go before
		// its own connection closes, and then reports caller_hangup. Either way the report
		// comes after the end and must change nothing, which is what follows.
		switch rep.EndReason {
		case persona.EndRoomClosed, persona.EndTerminated, persona.EndCallerHangup:
		default:
			t.Errorf("worker ended with %q, want room_closed, terminated or caller_hangup", rep.EndReason)
		}
		// call.ended waited for the worker's report: once it exists, the record it
		// announces holds the transcript.
		evt := waitEnded(t, st, sc.CallID)
		after := record(t, st, sc.CallID)
		if endedAt, err := time.Parse(time.RFC3339Nano, str(after.EndedAt)); err == nil {
			t.Logf("call.ended written %v after the end, with the worker's report", evt.CreatedAt.Sub(endedAt))
		}
		if len(after.Turns) == 0 || str(after.AssistantReport) != call.ReportReceived {
			t.Fatalf("on call.ended the record has %d turns, assistant_report %q; want the transcript, received", len(after.Turns), str(after.AssistantReport))
		}
		if after.Status != at.Status || str(after.EndReason) != str(at.EndReason) || str(after.EndedBy) != str(at.EndedBy) ||
			str(after.EndedAt) != str(at.EndedAt) || *after.DurationMS != *at.DurationMS {
			t.Errorf("the late report changed the call: %+v, was %+v", after, at)
		}
		// DELETE may cut the greeting short: the turn then keeps only the words the caller
		// heard, a prefix of the greeting.
		if g := after.Turns[0]; g.Speaker != "assistant" || !strings.HasPrefix("Hello there.", g.Text) || after.Metrics.ConnectingScreenMS == nil {
			t.Errorf("transcript %+v, metrics %+v: want the greeting turn (or what was heard of it) and the connecting screen time", after.Turns, after.Metrics)
		}
		if s := getSession(t, st, *c.SessionID); s.Status != session.StatusEnded || str(s.EndReason) != call.ReasonDeleted {
			t.Errorf("session = %+v, want ended, deleted", s)
		}
		eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, sc.CallID)
	})
}

// TestMediaFailed: a worker that cannot verify media in time reports media_failed, and
// the call ends failed with that reason: the room is deleted (the caller is dropped) and
// call.ended is written once.
func TestMediaFailed(t *testing.T) {
	st := tenant(t)
	// No caller can be verified within a millisecond of the worker joining.
	st.StartWorker(t, func(c *worker.Config) { c.VerifyTimeout = time.Millisecond }, worker.Options{})
	publishAssistant(t, st, "Front desk", "Hello there.", "ava_iris")
	placed, err := st.Sim.Place(platformsim.PlaceRequest{From: "+15551230000", To: st.Handles[0], Media: "video"})
	if err != nil {
		t.Fatal(err)
	}
	// With media failing at once, the call may end before a poll sees it answered.
	var sc platformsim.Call
	harness.WaitFor(t, 20*time.Second, "sim call answered", func() bool {
		sc, _ = st.Sim.Get(placed.ID)
		return sc.CallID != "" && (sc.Status == platformsim.StatusAnswered || sc.Status == platformsim.StatusEnded)
	})
	c := waitRecord(t, st, sc.CallID, "the call to end", func(c recordObj) bool { return c.EndedAt != nil })
	if c.Status != call.StatusFailed || str(c.EndReason) != call.ReasonMediaFailed || str(c.EndedBy) != call.EndedByAssistant {
		t.Errorf("call record = %+v, want failed with media_failed by the assistant", c)
	}
	if c.Metrics != nil && c.Metrics.FirstGreetingMS != nil {
		t.Errorf("a greeting was played on a call whose media failed: %+v", c.Metrics)
	}
	s := getSession(t, st, *c.SessionID)
	if s.Status != session.StatusFailed || str(s.EndReason) != call.ReasonMediaFailed {
		t.Errorf("session = %+v, want failed, media_failed", s)
	}
	waitSimCall(t, st, sc.ID, platformsim.StatusEnded) // dropped with the room
	harness.WaitFor(t, 10*time.Second, "room gone", func() bool {
		ps, _ := st.RTC.ListParticipants(context.Background(), s.ID)
		return len(ps) == 0
	})
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, sc.CallID)
}

// mutableReporter forwards a worker's reports to the control plane until muted: a worker
// that dies mid-call never sends its ended report.
type mutableReporter struct {
	next  pipeline.Reporter
	muted atomic.Bool
}

func (m *mutableReporter) Send(ctx context.Context, r persona.Report) error {
	if m.muted.Load() {
		return nil
	}
	return m.next.Send(ctx, r)
}

// leftWebhook waits until the API has handled participant_left for an identity in the
// room (prefix match) and returns it.
func leftWebhook(t *testing.T, st *harness.Stack, room, identityPrefix string) *livekit.ParticipantInfo {
	t.Helper()
	var p *livekit.ParticipantInfo
	harness.WaitFor(t, 30*time.Second, "participant_left of "+identityPrefix+"*", func() bool {
		for _, ev := range st.Webhooks(room) {
			if ev.Event == "participant_left" && strings.HasPrefix(ev.GetParticipant().GetIdentity(), identityPrefix) {
				p = ev.GetParticipant()
				return true
			}
		}
		return false
	})
	return p
}

// TestAssistantLeaving: on an inbound assistant call, neither a customer's client that
// watched and left, nor the assistant participant (kind AGENT) leaving without a report
// (its worker died), ends the call as if the customer's client of a human session left.
// The call still ends when the caller hangs up.
func TestAssistantLeaving(t *testing.T) {
	st := tenant(t)
	rep := &mutableReporter{next: &report.Client{BaseURL: st.URL, Secret: st.ReportSecret}}
	w := st.StartWorker(t, nil, worker.Options{Reporter: rep})
	publishAssistant(t, st, "Front desk", "Hello there.", "ava_theo")
	sc := ring(t, st, "video", platformsim.PartyOptions{})
	c := waitRecord(t, st, sc.CallID, "the greeting", func(c recordObj) bool { return c.Metrics != nil && c.Metrics.FirstGreetingMS != nil })
	room := *c.SessionID

	// A customer's client watches with a fresh token, then leaves.
	var tok tokenObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions/"+room+"/tokens", nil, &tok), http.StatusCreated, "POST tokens")
	cl := joinClient(t, tok.RTCURL, tok.ParticipantToken)
	harness.WaitFor(t, 20*time.Second, "client watches the assistant", func() bool { return cl.videoFramesFrom("assistant-") > 0 })
	cl.Leave()
	if !tok.WatchOnly || !strings.HasPrefix(tok.ParticipantIdentity, session.CustomerIdentityPrefix) {
		t.Errorf("assistant session token = watch_only %v, identity %q; want watch-only customer-...", tok.WatchOnly, tok.ParticipantIdentity)
	}
	leftWebhook(t, st, room, tok.ParticipantIdentity)
	if s := getSession(t, st, room); s.Status != session.StatusActive {
		t.Fatalf("after the watching client left, session = %+v, want active", s)
	}

	// The worker dies without a word: the assistant leaves the room, its report is lost.
	rep.muted.Store(true)
	w.Stop()
	p := leftWebhook(t, st, room, "assistant-")
	if p.GetKind() != livekit.ParticipantInfo_AGENT {
		t.Errorf("the assistant left as kind %v, want AGENT", p.GetKind())
	}
	if s := getSession(t, st, room); s.Status != session.StatusActive {
		t.Fatalf("after the assistant left, session = %+v, want active", s)
	}
	if c := record(t, st, sc.CallID); c.Status != call.StatusActive || c.EndedAt != nil {
		t.Fatalf("after the assistant left, call = %+v, want active", c)
	}
	if n := countEnded(t, st, sc.CallID); n != 0 {
		t.Fatalf("call.ended written %d times while the caller is still on the line", n)
	}

	// The caller hangs up: the call ends as the caller's. call.ended waits for the dead
	// worker's final report, which never comes: it goes out without it within 5 s of the
	// end, and the record says the report is missing.
	hangupSim(t, st, sc.ID)
	ended := waitStatus(t, st, room, session.StatusEnded)
	c = record(t, st, sc.CallID)
	if str(ended.EndReason) != call.ReasonRemoteHangup || str(c.EndedBy) != call.EndedByRemote {
		t.Errorf("session %+v, call %+v: want ended by the caller's hang-up", ended, c)
	}
	endedAt, err := time.Parse(time.RFC3339Nano, str(c.EndedAt))
	if err != nil {
		t.Fatal(err)
	}
	if n := countEnded(t, st, sc.CallID); n != 0 && time.Since(endedAt) < session.DefaultReportWait {
		t.Errorf("call.ended written %d times %v after the end, before the wait for the report was over", n, time.Since(endedAt))
	}
	evt := waitEnded(t, st, sc.CallID)
	if late := evt.CreatedAt.Sub(endedAt); late < session.DefaultReportWait || late > 5*time.Second {
		t.Errorf("call.ended written %v after the end, want between the wait (%v) and 5 s", late, session.DefaultReportWait)
	}
	if r := str(record(t, st, sc.CallID).AssistantReport); r != call.ReportMissing {
		t.Errorf("assistant_report = %q, want missing", r)
	}
}

// waitEnded waits for a call's call.ended in the event log and returns it, checking it
// is the only one.
func waitEnded(t *testing.T, st *harness.Stack, callID string) callevent.Event {
	t.Helper()
	harness.WaitFor(t, 30*time.Second, "call.ended", func() bool { return countEnded(t, st, callID) > 0 })
	return eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, callID)
}

// countEnded counts call.ended events of a call in the event log.
func countEnded(t *testing.T, st *harness.Stack, callID string) int {
	t.Helper()
	var list struct {
		Data []struct {
			Data struct {
				CallID string `json:"call_id"`
			} `json:"data"`
		} `json:"data"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/events?type=call.ended&limit=100", nil, &list), http.StatusOK, "GET events")
	n := 0
	for _, e := range list.Data {
		if e.Data.CallID == callID {
			n++
		}
	}
	return n
}

// TestDispatchWatchdog: livekit-server drops an agent dispatch without a word when no
// persona worker is free. With the only worker busy (one call at most), a second
// assistant call hears from no worker, and once the dispatch timeout passes after its
// answer it ends failed with assistant_unavailable: the room is deleted, the caller
// dropped, call.ended written once. The busy call goes on.
func TestDispatchWatchdog(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, func(c *worker.Config) { c.MaxJobs = 1 }, worker.Options{})
	publishAssistant(t, st, "Front desk", "Hello there.", "ava_maya")
	busy := ring(t, st, "audio", platformsim.PartyOptions{})
	waitRecord(t, st, busy.CallID, "the first call's greeting", func(c recordObj) bool { return c.Metrics != nil && c.Metrics.FirstGreetingMS != nil })

	second := ring(t, st, "video", platformsim.PartyOptions{})
	answered := time.Now()
	c := waitRecord(t, st, second.CallID, "the unattended call to end", func(c recordObj) bool { return c.EndedAt != nil })
	if waited := time.Since(answered); waited < testDispatchTimeout-time.Second {
		t.Errorf("ended %v after answer, before the dispatch timeout %v", waited, testDispatchTimeout)
	}
	if c.Status != call.StatusFailed || str(c.EndReason) != call.ReasonAssistantUnavailable || str(c.EndedBy) != call.EndedBySystem {
		t.Errorf("unattended call = %+v, want failed, assistant_unavailable, by system", c)
	}
	if c.Metrics != nil || str(c.AssistantReport) != call.ReportMissing {
		t.Errorf("unattended call has worker metrics %+v, assistant_report %q; want none, missing", c.Metrics, str(c.AssistantReport))
	}
	waitSimCall(t, st, second.ID, platformsim.StatusEnded)
	harness.WaitFor(t, 10*time.Second, "room gone", func() bool {
		ps, _ := st.RTC.ListParticipants(context.Background(), *c.SessionID)
		return len(ps) == 0
	})
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, second.CallID)

	if b := record(t, st, busy.CallID); b.Status != call.StatusActive {
		t.Fatalf("the busy call = %+v, want still active", b)
	}
	hangupSim(t, st, busy.ID)
	waitRecord(t, st, busy.CallID, "the busy call to end", func(c recordObj) bool { return str(c.EndReason) == call.ReasonRemoteHangup })
}

// TestJobCarriesVoiceAndModel: the draft's voice and model go into the published version
// and from it into the job LiveKit hands a persona worker.
func TestJobCarriesVoiceAndModel(t *testing.T) {
	st := tenant(t)
	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Voiced desk", "system_prompt": "Answer the phone.",
		"greeting": "Hello there.", "avatar_id": "ava_theo", "voice": "flite-awb", "model": "llama3.1:8b"}, &a), http.StatusCreated, "create assistant")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/lines/"+st.Lines[st.Handles[0]].ID+"/assign",
		map[string]any{"assistant_id": a.ID}, nil), http.StatusOK, "assign")
	sc := ring(t, st, "audio", platformsim.PartyOptions{})
	job := dispatchedJob(t, st, record(t, st, sc.CallID).sessionID(t))
	if job.Version.ID != a.ActiveVersionID || job.Version.Voice != "flite-awb" || job.Version.Model != "llama3.1:8b" {
		t.Errorf("job version = %+v, want %s with voice flite-awb and model llama3.1:8b", job.Version, a.ActiveVersionID)
	}
	if got := persona.VoiceFor(job.Version); got != "flite-awb" {
		t.Errorf("VoiceFor(job) = %q, want the version's voice over the avatar's default", got)
	}
	hangupSim(t, st, sc.ID)
	waitRecord(t, st, sc.CallID, "the call to end", func(c recordObj) bool { return c.EndedAt != nil })
}

// padReporter forwards a worker's reports and lengthens its ended report's transcript
// to turns turns of text each, as a call of hours would have.
type padReporter struct {
	next  pipeline.Reporter
	turns int
	text  string
}

func (p *padReporter) Send(ctx context.Context, r persona.Report) error {
	if r.Kind == persona.ReportEnded {
		at := int64(0)
		if n := len(r.Transcript); n > 0 {
			at = r.Transcript[n-1].EndMS
		}
		for i := range p.turns {
			sp := persona.SpeakerCaller
			if i%2 == 1 {
				sp = persona.SpeakerAssistant
			}
			r.Transcript = append(r.Transcript, persona.Turn{Speaker: sp, Text: fmt.Sprintf("%d %s", i, p.text),
				StartMS: at + int64(i)*1000, EndMS: at + int64(i)*1000 + 900})
		}
	}
	return p.next.Send(ctx, r)
}

// TestLongCallReportArrives: the final report of a long call, over the customer API's
// 256 KiB body limit but under the report's own 1 MiB, goes from a real worker through
// the real HTTP stack and is accepted whole: the record has every turn, untrimmed, and
// says the report was received. (Before, the 256 KiB limit answered 413 and the worker
// gave up: the transcript and the ended report were lost.)
func TestLongCallReportArrives(t *testing.T) {
	st := tenant(t)
	const turns = 1200 // 1200 turns of ~400 bytes: ~480 KiB
	pad := &padReporter{next: &report.Client{BaseURL: st.URL, Secret: st.ReportSecret},
		turns: turns, text: strings.Repeat("and then the caller said something quite long ", 8)}
	st.StartWorker(t, nil, worker.Options{Conversation: byName{}, Reporter: pad})
	publishAssistant(t, st, hangUpName, "Hello there.", "ava_maya")
	sc := ring(t, st, "audio", platformsim.PartyOptions{})
	c := waitRecord(t, st, sc.CallID, "the long transcript", func(c recordObj) bool { return len(c.Turns) > turns })
	size := 0
	for _, turn := range c.Turns {
		size += len(turn.Text)
		if turn.TextTrimmed {
			t.Fatalf("turn %+v trimmed: the report should have fitted whole", turn)
		}
	}
	if size <= httpapi.MaxBodyBytes {
		t.Fatalf("transcript text is %d bytes, want over the API limit %d for this test to mean anything", size, httpapi.MaxBodyBytes)
	}
	if c.Turns[0].Text != "Hello there." || c.Turns[len(c.Turns)-1].Text != fmt.Sprintf("%d %s", turns-1, pad.text) {
		t.Errorf("transcript runs %q ... %q, want the greeting first and the last padded turn last", c.Turns[0].Text, c.Turns[len(c.Turns)-1].Text)
	}
	if r := str(record(t, st, sc.CallID).AssistantReport); r != call.ReportReceived {
		t.Errorf("assistant_report = %q, want received", r)
	}
	t.Logf("accepted a final report with %d turns, %d bytes of text", len(c.Turns), size)
}
