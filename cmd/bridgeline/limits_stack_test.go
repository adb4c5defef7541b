package main

import (
	"strings"
	"testing"
	"time"

	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
)

// Sessions longer than MAX_SESSION_MINUTES are ended by the stack's sweeper with
// end_reason max_duration, through the same end as every other: a hosted session (its
// client is dropped, the sim party hung up) and an inbound assistant call answered by
// the stack's own persona worker, whose late report only fills in the transcript.
// call.ended is delivered exactly once for each. The LiveKit SDK of the stack's sim
// parties and worker logs into the stack's log, warnings and up only.
func TestMaxDurationOnTheStack(t *testing.T) {
	s := newTestStack(t)
	const maxSession = 6 * time.Second
	s.env = append(s.env, "MAX_SESSION_MINUTES=0.1", "PERSONA_WORKERS=1")
	s.start()
	r := eventtest.NewReceiver(t)
	s.endpoint(r)

	// An assistant on the second dev line.
	a := s.mustDo(201, "POST", "/v1/assistants", `{"name":"Ada","system_prompt":"Be kind.","greeting":"Hello there.","avatar_id":"ava_iris"}`)
	s.mustDo(201, "POST", "/v1/assistants/"+a["id"].(string)+"/publish", "")
	lines := s.mustDo(200, "GET", "/v1/lines", "")
	for _, l := range lines["data"].([]any) {
		if m := l.(map[string]any); m["handle"] == devHandles[1] {
			s.mustDo(200, "POST", "/v1/lines/"+m["id"].(string)+"/assign", `{"assistant_id":"`+a["id"].(string)+`"}`)
		}
	}

	out := s.mustDo(201, "POST", "/v1/sessions", `{"platform_handle":"sim:long-talker","media":"video"}`)
	sessionID, callID := out["session_id"].(string), out["call_id"].(string)
	room := s.join(out["rtc_url"].(string), out["participant_token"].(string))
	defer room.Disconnect()
	placed := s.mustDo(201, "POST", "/sim/calls", `{"from":"sim:long-caller","to":"`+devHandles[1]+`","media":"video"}`)
	answered := s.waitStatus("/sim/calls/"+placed["id"].(string), "answered")
	assistantCall := answered["call_id"].(string)
	s.waitStatus("/v1/sessions/"+sessionID, "active")
	waitCall := func(what string, cond func(map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, c := s.do("GET", "/v1/calls/"+assistantCall, "")
			if cond(c) {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("assistant call %s: %s never came: %v", assistantCall, what, c)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitCall("the greeting", func(c map[string]any) bool {
		m, _ := c["metrics"].(map[string]any)
		return m["first_greeting_audio_ms"] != nil
	})

	for _, id := range []string{callID, assistantCall} {
		got := r.WaitFor(t, callevent.TypeCallEnded, 30*time.Second, eventtest.ForCall(id))
		if reason := stackEndReason(got); reason != "max_duration" {
			t.Errorf("call %s: call.ended end_reason = %q, want max_duration", id, reason)
		}
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
	s.waitStatus("/sim/calls/"+placed["id"].(string), "ended")
	// A DELETE afterwards answers the ended session as it is.
	if again := s.mustDo(200, "DELETE", "/v1/sessions/"+sessionID, ""); again["end_reason"] != "max_duration" {
		t.Errorf("DELETE after the end = %v, want it unchanged", again)
	}

	// The worker's report comes after the room was deleted: the transcript is filled in,
	// the end stays the sweeper's.
	ac := waitCall("the transcript", func(c map[string]any) bool { tr, _ := c["transcript"].([]any); return len(tr) > 0 })
	if ac["end_reason"] != "max_duration" || ac["ended_by"] != "system" || ac["handled_by"] != "assistant" {
		t.Errorf("assistant call record = %v, want handled by the assistant, ended by the system with max_duration", ac)
	}

	counts := s.endedEvents()
	for _, id := range []string{callID, assistantCall} {
		if counts[id] != 1 {
			t.Errorf("call %s: %d call.ended events, want 1", id, counts[id])
		}
	}
	// Everything the stack wrote is its own: JSON log records and "bridgeline:" lines. The
	// SDK's default logger would add a plain line for every connection step.
	for _, line := range strings.Split(s.logs(), "\n") {
		if line != "" && !strings.HasPrefix(line, "{") && !strings.HasPrefix(line, "bridgeline: ") {
			t.Errorf("the stack wrote a line that is not its log: %s", line)
			break
		}
		if strings.Contains(line, `"component":"lksdk"`) && !strings.Contains(line, `"level":"WARN"`) && !strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("the LiveKit SDK logged below warnings: %s", line)
			break
		}
	}
}
