package main

import (
	"strings"
	"testing"
	"time"

	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
)

// A session longer than MAX_SESSION_MINUTES is ended by the stack's sweeper with
// end_reason max_duration, through the same end as every other: the room is deleted (the
// client is dropped), the sim party hung up, and call.ended delivered exactly once. The
// LiveKit SDK of the stack's sim parties logs nothing below warnings.
func TestMaxDurationOnTheStack(t *testing.T) {
	s := newTestStack(t)
	const maxSession = 3 * time.Second
	s.env = append(s.env, "MAX_SESSION_MINUTES=0.05")
	s.start()
	r := eventtest.NewReceiver(t)
	s.endpoint(r)

	out := s.mustDo(201, "POST", "/v1/sessions", `{"platform_handle":"sim:long-talker","media":"video"}`)
	sessionID, callID := out["session_id"].(string), out["call_id"].(string)
	room := s.join(out["rtc_url"].(string), out["participant_token"].(string))
	defer room.Disconnect()
	s.waitStatus("/v1/sessions/"+sessionID, "active")

	got := r.WaitFor(t, callevent.TypeCallEnded, 20*time.Second, eventtest.ForCall(callID))
	if reason := stackEndReason(got); reason != "max_duration" {
		t.Fatalf("call.ended end_reason = %q, want max_duration", reason)
	}
	ses := s.mustDo(200, "GET", "/v1/sessions/"+sessionID, "")
	created, _ := time.Parse(time.RFC3339Nano, ses["created_at"].(string))
	ended, _ := time.Parse(time.RFC3339Nano, ses["ended_at"].(string))
	if ses["status"] != "ended" || ses["end_reason"] != "max_duration" || ended.Sub(created) < maxSession {
		t.Errorf("session = %v, want ended with max_duration no sooner than %v after creation", ses, maxSession)
	}
	c := s.mustDo(200, "GET", "/v1/calls/"+callID, "")
	if c["end_reason"] != "max_duration" || c["ended_by"] != "system" || c["status"] != "ended" {
		t.Errorf("call record = %v, want ended by the system with max_duration", c)
	}
	deadline := time.Now().Add(15 * time.Second)
	for room.ConnectionState() != lksdk.ConnectionStateDisconnected {
		if time.Now().After(deadline) {
			t.Fatal("the client is still connected after the session reached its maximum length")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.waitStatus("/sim/calls/"+s.simCallOf(callID)["id"].(string), "ended")
	// A DELETE afterwards answers the ended session as it is.
	if again := s.mustDo(200, "DELETE", "/v1/sessions/"+sessionID, ""); again["end_reason"] != "max_duration" {
		t.Errorf("DELETE after the end = %v, want it unchanged", again)
	}
	if n := s.endedEvents()[callID]; n != 1 {
		t.Errorf("%d call.ended events, want 1", n)
	}
	for _, line := range strings.Split(s.logs(), "\n") {
		if strings.Contains(line, `"component":"lksdk"`) && !strings.Contains(line, `"level":"WARN"`) && !strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the LiveKit SDK logged below warnings: %s", line)
			break
		}
	}
}
