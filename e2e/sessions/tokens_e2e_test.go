package sessions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/livekit/protocol/livekit"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/session"
)

// participant is who LiveKit lists in a room under an identity (nil when absent).
func participant(t *testing.T, st *harness.Stack, room, identity string) *livekit.ParticipantInfo {
	t.Helper()
	ps, err := st.RTC.ListParticipants(context.Background(), room)
	if err != nil {
		t.Fatalf("ListParticipants(%s): %v", room, err)
	}
	for _, p := range ps {
		if p.Identity == identity {
			return p
		}
	}
	return nil
}

func waitActive(t *testing.T, st *harness.Stack, room, identity string) *livekit.ParticipantInfo {
	t.Helper()
	var p *livekit.ParticipantInfo
	harness.WaitFor(t, 20*time.Second, identity+" active in "+room, func() bool {
		p = participant(t, st, room, identity)
		return p != nil && p.State == livekit.ParticipantInfo_ACTIVE
	})
	return p
}

// TestTokensSideBySide: two tokens of one session join as two participants, each under
// the identity its answer named, and neither is kicked (before identities were per token,
// the second join disconnected the first). The session ends only when the last customer
// client leaves: the first leaving changes nothing.
func TestTokensSideBySide(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	var second tokenObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions/"+s.ID+"/tokens", map[string]any{"name": "Front desk"}, &second),
		http.StatusCreated, "POST tokens")
	if second.ParticipantIdentity == s.ParticipantIdentity || !strings.HasPrefix(second.ParticipantIdentity, session.CustomerIdentityPrefix) {
		t.Fatalf("second identity = %q, first %q; want a distinct customer-... identity", second.ParticipantIdentity, s.ParticipantIdentity)
	}
	if second.ParticipantName != "Front desk" || second.WatchOnly {
		t.Fatalf("second token = %+v, want name Front desk, publishing", second)
	}

	first := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)
	other := joinClient(t, second.RTCURL, second.ParticipantToken)
	waitActive(t, st, s.ID, s.ParticipantIdentity)
	if p := waitActive(t, st, s.ID, second.ParticipantIdentity); p.Name != "Front desk" {
		t.Errorf("second participant's name = %q, want Front desk", p.Name)
	}
	// Both stay: a kick (DUPLICATE_IDENTITY) would come within a second of the join.
	select {
	case <-first.Disconnected():
		t.Fatal("the first client was disconnected when the second joined")
	case <-other.Disconnected():
		t.Fatal("the second client was disconnected")
	case <-time.After(3 * time.Second):
	}
	harness.WaitFor(t, 20*time.Second, "both clients hear the party", func() bool {
		return !first.FirstSound().IsZero() && !other.FirstSound().IsZero()
	})

	first.Leave()
	leftWebhook(t, st, s.ID, s.ParticipantIdentity)
	// The webhook is handled before the test server's receiver records it; give a late
	// handler a moment anyway before reading.
	time.Sleep(500 * time.Millisecond)
	if got := getSession(t, st, s.ID); got.Status != session.StatusActive {
		t.Fatalf("after the first of two clients left, status = %s, want active", got.Status)
	}
	select {
	case <-other.Disconnected():
		t.Fatal("the second client was disconnected when the first left")
	default:
	}

	other.Leave()
	ended := waitStatus(t, st, s.ID, session.StatusEnded)
	if str(ended.EndReason) != call.ReasonParticipantLeft {
		t.Errorf("end_reason = %q, want participant_left", str(ended.EndReason))
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
}

// TestWatchOnlyToken: a watch-only token joins and hears the call, but livekit-server
// lets it publish neither a track nor data; its leaving does not end the session while
// the publishing client stays.
func TestWatchOnlyToken(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	talker := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)

	var watch tokenObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions/"+s.ID+"/tokens", map[string]any{"watch_only": true}, &watch),
		http.StatusCreated, "POST tokens watch_only")
	if !watch.WatchOnly || watch.ParticipantName != session.DefaultParticipantName {
		t.Fatalf("watch token = %+v, want watch_only, default name", watch)
	}
	// The watcher tries to publish a tone: the server never accepts the track, and the
	// SDK's publish fails (it waits for the server's TrackPublished, which does not come).
	tone := callerbot.Tone(440)
	if bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: watch.RTCURL, Token: watch.ParticipantToken, Audio: &tone}); err == nil {
		bot.Leave()
		t.Fatal("a watch-only token published an audio track")
	} else {
		t.Logf("publish with a watch-only token: %v", err)
	}
	watcher := joinClient(t, watch.RTCURL, watch.ParticipantToken)
	p := waitActive(t, st, s.ID, watch.ParticipantIdentity)
	if perm := p.GetPermission(); perm == nil || perm.CanPublish || perm.CanPublishData || !perm.CanSubscribe {
		t.Fatalf("watcher's permission = %+v, want subscribe only", perm)
	}
	if len(p.Tracks) != 0 {
		t.Fatalf("watcher publishes %d tracks, want none", len(p.Tracks))
	}
	harness.WaitFor(t, 20*time.Second, "watcher hears the party", func() bool { return !watcher.FirstSound().IsZero() })

	watcher.Leave()
	leftWebhook(t, st, s.ID, watch.ParticipantIdentity)
	time.Sleep(500 * time.Millisecond)
	if got := getSession(t, st, s.ID); got.Status != session.StatusActive {
		t.Fatalf("after the watcher left, status = %s, want active", got.Status)
	}
	talker.Leave()
	waitStatus(t, st, s.ID, session.StatusEnded)
}

// TestHandedOverCallWatchOnly: a customer_decides call nobody decides goes to the line's
// assistant. A client that joined with call.incoming's token (which may publish: it was
// minted for a customer who would answer) becomes watch-only at the handover, and so does
// one joining with it afterwards.
func TestHandedOverCallWatchOnly(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{}) // the assistant takes the call, so it lasts
	publishAssistant(t, st, "Front desk", "Hello there.", "ava_theo")
	patchLine(t, st, st.Handles[0], map[string]any{"inbound_mode": "customer_decides", "decision_timeout_seconds": 3,
		"on_decision_timeout": "assistant"})
	recv := incomingReceiver(t, st)
	recv.AnswerIncoming(func(callevent.CallIncoming) string { return "" }) // nobody decides

	sc := placeCall(t, st, st.Handles[0], "audio")
	in := recv.WaitFor(t, callevent.TypeCallIncoming, 10*time.Second, nil) // the tenant's only call
	var data callevent.CallIncoming
	if err := json.Unmarshal(in.Event.Data, &data); err != nil {
		t.Fatal(err)
	}
	room, identity := data.Session.SessionID, data.Session.ParticipantIdentity
	if !strings.HasPrefix(identity, session.CustomerIdentityPrefix) {
		t.Fatalf("call.incoming session identity = %q, want customer-... (data %s)", identity, in.Event.Data)
	}
	early := joinClient(t, data.Session.RTCURL, data.Session.ParticipantToken)
	if p := waitActive(t, st, room, identity); !p.GetPermission().GetCanPublish() {
		t.Fatalf("while ringing, the call.incoming token's client may not publish: %+v", p.GetPermission())
	}
	waitStatus(t, st, room, session.StatusActive)
	if s := getSession(t, st, room); s.Mode != session.ModeAssistant {
		t.Fatalf("after the decision timeout, session mode = %s, want assistant", s.Mode)
	}
	harness.WaitFor(t, 10*time.Second, "the early client made watch-only", func() bool {
		p := participant(t, st, room, identity)
		return p != nil && !p.GetPermission().GetCanPublish() && !p.GetPermission().GetCanPublishData() && p.GetPermission().GetCanSubscribe()
	})

	// Joining again with the same token (it replaces the connection): watch-only too.
	early.Leave()
	late := joinClient(t, data.Session.RTCURL, data.Session.ParticipantToken)
	harness.WaitFor(t, 20*time.Second, "the late client made watch-only", func() bool {
		p := participant(t, st, room, identity)
		return p != nil && p.State == livekit.ParticipantInfo_ACTIVE && !p.GetPermission().GetCanPublish()
	})
	late.Leave()
	hangupSim(t, st, sc.ID)
	waitStatus(t, st, room, session.StatusEnded)
}
