package main

import "testing"

// TestDevLinesAnswer: a fresh `bridgeline dev` lists its lines as they behave. Both dev
// lines start in inbound_mode assistant with the published "Dev assistant" assigned, so
// a call to +15550100002, the line no page assigns, is answered by it instead of ending
// no_assistant; a restart seeds nothing more.
func TestDevLinesAnswer(t *testing.T) {
	s := newTestStack(t)
	s.env = append(s.env, "PERSONA_WORKERS=1")
	s.start()

	devAssistant := func() string {
		t.Helper()
		lines := s.mustDo(200, "GET", "/v1/lines", "")["data"].([]any)
		if len(lines) != len(devHandles) {
			t.Fatalf("%d lines, want %d", len(lines), len(devHandles))
		}
		var id string
		for _, l := range lines {
			m := l.(map[string]any)
			asst, _ := m["assistant_id"].(string)
			if m["inbound_mode"] != "assistant" || asst == "" || (id != "" && asst != id) {
				t.Fatalf("line %v: inbound_mode %v, assistant %v; want assistant, the dev assistant on each", m["handle"], m["inbound_mode"], m["assistant_id"])
			}
			id = asst
		}
		a := s.mustDo(200, "GET", "/v1/assistants/"+id, "")
		if a["name"] != devAssistantName || a["active_version_id"] == nil {
			t.Fatalf("the lines' assistant = %v, want %q, published", a, devAssistantName)
		}
		return id
	}
	asst := devAssistant()

	placed := s.mustDo(201, "POST", "/sim/calls", `{"from":"sim:newcomer","to":"`+devHandles[1]+`","media":"audio"}`)
	answered := s.waitStatus("/sim/calls/"+placed["id"].(string), "answered", "rejected", "ended")
	if answered["status"] != "answered" {
		t.Fatalf("a call to %s: %v, want answered", devHandles[1], answered)
	}
	callID := answered["call_id"].(string)
	c := s.waitStatus("/v1/calls/"+callID, "active")
	if c["handled_by"] != "assistant" || c["assistant_id"] != asst {
		t.Errorf("the call = handled_by %v, assistant %v; want the dev assistant %s", c["handled_by"], c["assistant_id"], asst)
	}
	s.mustDo(200, "POST", "/sim/calls/"+placed["id"].(string)+"/hangup", "")
	if ended := s.waitStatus("/v1/calls/"+callID, "ended", "failed"); ended["end_reason"] != "remote_hangup" {
		t.Errorf("the call ended %v %v, want remote_hangup", ended["status"], ended["end_reason"])
	}

	s.stop()
	s.start()
	if again := devAssistant(); again != asst {
		t.Errorf("after a restart the lines' assistant is %s, want %s still", again, asst)
	}
	if n := len(s.mustDo(200, "GET", "/v1/assistants", "")["data"].([]any)); n != 1 {
		t.Errorf("%d assistants after a restart, want the one dev assistant", n)
	}
}
