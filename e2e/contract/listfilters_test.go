package contract_test

// The list filters and ending_before over HTTP, on the real stack (livekit-server, the
// sim platform, SQLite), every exchange validated against openapi.yaml.

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	callrec "github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
)

func TestContractListFilters(t *testing.T) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	// The dialled handles ring for the whole test, so the sessions' statuses stay as the
	// test sets them (ringing, or ended by DELETE).
	s := harness.Start(t, harness.Options{RingDelay: 10 * time.Minute})
	srv := httptest.NewServer(s.API.Handler())
	t.Cleanup(srv.Close)
	c := contracttest.New(t, srv.URL, s.APIKey, s.API.Routes())
	line1, line2 := s.Lines[harness.Line1].ID, s.Lines[harness.Line2].ID
	start := time.Now().Add(-time.Second)

	// Three outbound sessions (the API), the first one ended; two inbound calls with an
	// assistant, written as the inbound flow writes them.
	var sessions, outCalls []string
	for i, body := range []string{`{"platform_handle":"+15550108001"}`, `{"platform_handle":"+15550108002"}`,
		`{"platform_handle":"+15550108003","line_id":"` + line2 + `"}`} {
		r := c.OK("POST", "/v1/sessions", body, 201)
		sessions, outCalls = append([]string{r.Str("id")}, sessions...), append([]string{r.Str("call_id")}, outCalls...)
		if i == 0 {
			c.OK("DELETE", "/v1/sessions/"+r.Str("id"), "", 200)
		}
	}
	asst := ident.New("asst")
	var inCalls []string
	for i := range 2 {
		in := callrec.Call{ID: ident.New("call"), AccountID: s.AccountID, Direction: callrec.Inbound, LineID: line1,
			From: "+15550109000", To: s.Handles[0], Media: "video", Status: callrec.StatusEnded, HandledBy: callrec.HandledByAssistant,
			AssistantID: asst, Platform: "sim", PlatformCallID: fmt.Sprintf("flt-%d", i), StartedAt: time.Now().UTC()}
		if err := s.Store.SaveCall(context.Background(), in, nil); err != nil {
			t.Fatal(err)
		}
		inCalls = append([]string{in.ID}, inCalls...)
	}
	end := time.Now().Add(time.Second)
	endedOut := outCalls[2] // the first session's call

	list := func(path string) ([]string, bool) {
		t.Helper()
		r := c.OK("GET", path, "", 200)
		var got []string
		data, _ := r.Body["data"].([]any)
		for _, d := range data {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		more, _ := r.Body["has_more"].(bool)
		return got, more
	}
	want := func(path string, wantIDs []string, wantMore bool) {
		t.Helper()
		if got, more := list(path); !slices.Equal(got, wantIDs) || more != wantMore {
			t.Errorf("GET %s = %v, has_more %v; want %v, %v", path, got, more, wantIDs, wantMore)
		}
	}
	q := url.QueryEscape
	allCalls := append(slices.Clone(inCalls), outCalls...)

	want("/v1/calls?status=ended", append(slices.Clone(inCalls), endedOut), false)
	want("/v1/calls?direction=outbound", outCalls, false)
	want("/v1/calls?direction=inbound&status=ended&line_id="+line1+"&assistant_id="+asst, inCalls, false)
	want("/v1/calls?assistant_id="+asst+"&limit=1", inCalls[:1], true)
	want("/v1/calls?status=ringing&line_id="+line2, outCalls[:1], false)
	want("/v1/calls?status=active", nil, false)
	want("/v1/calls?created[gte]="+q(start.UTC().Format(time.RFC3339Nano))+"&created[lte]="+strconv.FormatInt(end.Unix()+1, 10), allCalls, false)
	want("/v1/calls?created[gte]="+strconv.FormatInt(end.Unix()+2, 10), nil, false)
	want("/v1/calls?created[lte]="+q(start.Format(time.RFC3339)), nil, false)
	// ending_before: the page just before the cursor, newest first; has_more says newer exist.
	want("/v1/calls?limit=2&ending_before="+allCalls[3], allCalls[1:3], true)
	want("/v1/calls?limit=5&ending_before="+allCalls[3], allCalls[:3], false)
	want("/v1/calls?direction=outbound&limit=1&ending_before="+outCalls[2], outCalls[1:2], true)
	want("/v1/calls?limit=2&starting_after="+allCalls[1], allCalls[2:4], true)

	want("/v1/sessions?status=ended", sessions[2:], false)
	want("/v1/sessions?status=ringing", sessions[:2], false)
	want("/v1/sessions?status=ringing&limit=1&ending_before="+sessions[1], sessions[:1], false)

	evs, _ := list("/v1/events?type=call.ended")
	if len(evs) != 1 {
		t.Fatalf("call.ended events = %v, want the deleted session's one", evs)
	}
	want("/v1/events?type=call.ended&created[gte]="+strconv.FormatInt(start.Unix(), 10), evs, false)
	want("/v1/events?created[gte]="+q(end.Add(time.Minute).Format(time.RFC3339)), nil, false)
	want("/v1/events?ending_before="+evs[0]+"&type=call.ended", nil, false)

	// Every list takes ending_before.
	for _, path := range []string{"/v1/assistants", "/v1/lines", "/v1/api_keys", "/v1/webhook_endpoints", "/v1/sessions", "/v1/calls", "/v1/events"} {
		c.Fail("GET", path+"?ending_before=nope_1", "", 400, "parameter_invalid")
	}
	want("/v1/lines?limit=1&ending_before="+line1, []string{line2}, false)

	// Invalid values: 400 parameter_invalid naming the parameter.
	for _, tc := range []struct {
		path, param string
		valid       bool // the document cannot tell (both cursors), so the request is valid by it
	}{
		{"/v1/calls?status=declinedd", "status", false},
		{"/v1/calls?direction=sideways", "direction", false},
		{"/v1/calls?assistant_id=" + line1, "assistant_id", false},
		{"/v1/calls?created[gte]=yesterday", "created[gte]", false},
		{"/v1/calls?created[lte]=12.5", "created[lte]", false},
		{"/v1/calls?created[gte]=", "created[gte]", false},
		{"/v1/events?created[lte]=2026-11-22", "created[lte]", false},
		{"/v1/sessions?status=declined", "status", false},
		{"/v1/calls?ending_before=" + sessions[0], "ending_before", false},
		{"/v1/calls?starting_after=" + allCalls[0] + "&ending_before=" + allCalls[2], "ending_before", true},
		{"/v1/events?starting_after=" + evs[0] + "&ending_before=" + evs[0], "ending_before", true},
	} {
		k := contracttest.Call{Method: "GET", Path: tc.path, Status: 400, Code: "parameter_invalid", Valid: tc.valid}
		r := c.Do(k)
		if e, _ := r.Body["error"].(map[string]any); e["param"] != tc.param {
			t.Errorf("GET %s: param %v, want %s", tc.path, e["param"], tc.param)
		}
	}
	for _, path := range []string{"/v1/calls?created[gt]=1", "/v1/sessions?direction=inbound", "/v1/events?status=ended"} {
		c.Fail("GET", path, "", 400, "parameter_unknown")
	}
}
