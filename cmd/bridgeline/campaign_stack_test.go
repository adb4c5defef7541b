package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestKillStackMidCampaign (campaign crash safety): SIGKILL the stack while a campaign
// dials, start it again on the same data. The campaign completes; every recipient ends
// with exactly one call placed (max_attempts 1) and one call record: none called twice,
// none lost. A claim the crash cut short before its dial is repaired (not_placed, then
// dialled) a minute after it was made, and a call under way at the crash ends no_answer
// at the ring timeout (90 s from its dial), so the wait is bounded past both.
func TestKillStackMidCampaign(t *testing.T) {
	s := newTestStack(t)
	s.start()
	asst := s.mustDo(200, "GET", "/v1/assistants", "")["data"].([]any)[0].(map[string]any)["id"].(string)
	const n = 24
	recipients := strings.TrimSuffix(strings.Repeat(`{"platform_handle":"sim:busy"},`, n), ",")
	cmp := s.mustDo(201, "POST", "/v1/campaigns", fmt.Sprintf(`{"name":"Crash","assistant_id":%q,"recipients":[%s],`+
		`"settings":{"max_concurrent_calls":3,"calls_per_second":3,"retry":{"max_attempts":1,"on":[]},"amd":false}}`, asst, recipients))
	id := cmp["id"].(string)
	s.mustDo(200, "POST", "/v1/campaigns/"+id+"/start", "")

	// A third of the list dialled, then the crash.
	deadline := time.Now().Add(30 * time.Second)
	for {
		counts := s.mustDo(200, "GET", "/v1/campaigns/"+id, "")["counts"].(map[string]any)
		if dialled := counts["busy"].(float64) + counts["calling"].(float64); dialled >= n/3 {
			t.Logf("killed the stack with %v of %d recipients busy and %v calling", counts["busy"], n, counts["calling"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign counts after 30 s = %v, want a third of %d dialled", counts, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	s.start()

	deadline = time.Now().Add(150 * time.Second)
	for {
		c := s.mustDo(200, "GET", "/v1/campaigns/"+id, "")
		if c["status"] == "completed" {
			t.Logf("completed after the restart: %v", c["counts"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign after the restart = %s %v, want completed\n%s", c["status"], c["counts"], s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}

	rs := s.mustDo(200, "GET", "/v1/campaigns/"+id+"/recipients?limit=100", "")["data"].([]any)
	if len(rs) != n {
		t.Fatalf("%d recipients, want %d", len(rs), n)
	}
	callsOf := map[string]string{} // call id -> recipient id, from the attempts
	repaired := 0
	for _, x := range rs {
		r := x.(map[string]any)
		placed := 0
		for _, a := range r["attempts"].([]any) {
			a := a.(map[string]any)
			if a["outcome"] == "not_placed" {
				repaired++
				continue
			}
			placed++
			if id, ok := a["call_id"].(string); ok {
				callsOf[id] = r["id"].(string)
			}
		}
		// busy as the sim answers; a call under way at the crash, which the sim forgot,
		// rings in its record until the ring timeout (no_answer), or failed at the dial.
		if st := r["status"]; placed != 1 || (st != "busy" && st != "no_answer" && st != "failed") {
			t.Errorf("recipient %s: %d calls placed, status %s; want one call, busy (or the crash's no_answer or failed)", r["id"], placed, st)
		}
	}
	// The call records: one per recipient, each an attempt's.
	perRecipient := map[string]int{}
	for _, x := range s.mustDo(200, "GET", "/v1/calls?limit=100", "")["data"].([]any) {
		c := x.(map[string]any)
		if c["campaign_id"] != id {
			continue
		}
		rid, _ := c["recipient_id"].(string)
		perRecipient[rid]++
		if callsOf[c["id"].(string)] != rid {
			t.Errorf("call %s of recipient %s is none of its attempts' calls", c["id"], rid)
		}
	}
	if len(perRecipient) != n {
		t.Errorf("call records name %d recipients, want all %d", len(perRecipient), n)
	}
	for rid, k := range perRecipient {
		if k != 1 {
			t.Errorf("recipient %s has %d call records, want 1: called twice", rid, k)
		}
	}
	t.Logf("%d recipients, one call each; %d claims the crash cut short repaired", n, repaired)
}
