package sessions_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/listing"
)

type campaignObj struct {
	ID          string         `json:"id"`
	Status      string         `json:"status"`
	VersionID   *string        `json:"version_id"`
	Recipients  int            `json:"recipients"`
	Counts      map[string]int `json:"counts"`
	CompletedAt *string        `json:"completed_at"`
	Settings    struct {
		MaxConcurrentCalls int `json:"max_concurrent_calls"`
	} `json:"settings"`
}

type recipientObj struct {
	ID             string `json:"id"`
	PlatformHandle string `json:"platform_handle"`
	Status         string `json:"status"`
	Attempts       []struct {
		CallID    *string `json:"call_id"`
		StartedAt string  `json:"started_at"`
		EndedAt   *string `json:"ended_at"`
		Outcome   *string `json:"outcome"`
	} `json:"attempts"`
}

type campaignCallObj struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	StartedAt   string  `json:"started_at"`
	EndedAt     *string `json:"ended_at"`
	AnsweredAt  *string `json:"answered_at"`
	EndReason   *string `json:"end_reason"`
	CampaignID  *string `json:"campaign_id"`
	RecipientID *string `json:"recipient_id"`
	VersionID   *string `json:"version_id"`
	DurationMS  *int64  `json:"duration_ms"`
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return v
}

// TestCampaignRunsOnSim is a campaign on the real stack (SQLite, livekit-server, the sim,
// a persona worker): eight recipients, concurrency 2, five that answer (the assistant
// greets and hangs up), two busy and one that does not answer, retried once each after
// a second. Every recipient ends in the status its party gives, the busy and unanswered
// ones after exactly two calls, the others after one; no two calls of one attempt, never
// more than two calls at once; every call's record and call.ended name the campaign and
// the recipient; campaign.completed comes once, with counts that match the recipients.
func TestCampaignRunsOnSim(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{Conversation: byName{}})
	a := publishAssistant(t, st, hangUpName, "Hello there.", "ava_maya")

	handles := []string{"+15550107001", platformsim.HandleBusy, "+15550107002", platformsim.HandleNoAnswer,
		"+15550107003", platformsim.HandleBusy, "+15550107004", "+15550107005"}
	var recipients []map[string]any
	for i, h := range handles {
		recipients = append(recipients, map[string]any{"platform_handle": h, "metadata": map[string]string{"row": string(rune('a' + i))}})
	}
	var c campaignObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns", map[string]any{
		"name": "Reminders", "assistant_id": a.ID, "line_id": st.Lines[st.Handles[0]].ID, "recipients": recipients,
		"settings": map[string]any{"max_concurrent_calls": 2, "calls_per_second": 5,
			"retry": map[string]any{"max_attempts": 2, "delay_seconds": 1, "on": []string{"busy", "no_answer"}}},
	}, &c), http.StatusCreated, "POST /v1/campaigns")
	if c.Status != "draft" || c.Recipients != len(handles) || c.Counts["pending"] != len(handles) {
		t.Fatalf("created = %+v, want a draft with %d pending recipients", c, len(handles))
	}
	// A draft dials nothing.
	time.Sleep(1500 * time.Millisecond)
	for _, sc := range st.Sim.List() {
		if slices.Contains(handles, sc.To) {
			t.Fatalf("a draft campaign dialled %s", sc.To)
		}
	}

	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/start", nil, &c), http.StatusOK, "start")
	if c.Status != "running" || c.VersionID == nil || *c.VersionID != a.ActiveVersionID {
		t.Fatalf("started = %+v, want running on version %s", c, a.ActiveVersionID)
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/start", nil, nil), http.StatusConflict, "start twice")

	harness.WaitFor(t, 120*time.Second, "the campaign completed", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET campaign")
		return c.Status == "completed"
	})
	want := map[string]int{"pending": 0, "calling": 0, "answered": 5, "busy": 2, "no_answer": 1, "failed": 0, "canceled": 0}
	for k, n := range want {
		if c.Counts[k] != n {
			t.Errorf("counts = %v, want %v", c.Counts, want)
			break
		}
	}

	// The recipients, in pages of three.
	var rs []recipientObj
	after := ""
	for {
		var page struct {
			Data    []recipientObj `json:"data"`
			HasMore bool           `json:"has_more"`
		}
		path := "/v1/campaigns/" + c.ID + "/recipients?limit=3"
		if after != "" {
			path += "&starting_after=" + after
		}
		harness.Must(t, st.Do(t, http.MethodGet, path, nil, &page), http.StatusOK, "GET recipients")
		rs = append(rs, page.Data...)
		if !page.HasMore {
			break
		}
		after = page.Data[len(page.Data)-1].ID
	}
	if len(rs) != len(handles) {
		t.Fatalf("%d recipients listed, want %d", len(rs), len(handles))
	}
	var busyOnly struct {
		Data []recipientObj `json:"data"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID+"/recipients?status=busy", nil, &busyOnly), http.StatusOK, "GET recipients?status=busy")
	if len(busyOnly.Data) != 2 {
		t.Errorf("status=busy lists %d recipients, want 2", len(busyOnly.Data))
	}

	callIDs := map[string]string{} // call -> recipient
	var calls []campaignCallObj
	for i, r := range rs {
		if r.PlatformHandle != handles[i] {
			t.Errorf("recipient %d is %s, want %s (list order)", i, r.PlatformHandle, handles[i])
		}
		wantStatus, wantAttempts := "answered", 1
		switch r.PlatformHandle {
		case platformsim.HandleBusy:
			wantStatus, wantAttempts = "busy", 2
		case platformsim.HandleNoAnswer:
			wantStatus, wantAttempts = "no_answer", 2
		}
		if r.Status != wantStatus || len(r.Attempts) != wantAttempts {
			t.Errorf("recipient %s: status %s with %d attempts, want %s with %d", r.PlatformHandle, r.Status, len(r.Attempts), wantStatus, wantAttempts)
			continue
		}
		for j, at := range r.Attempts {
			if at.CallID == nil || at.Outcome == nil || *at.Outcome != wantStatus || at.EndedAt == nil {
				t.Errorf("recipient %s attempt %d = %+v, want a call with outcome %s", r.PlatformHandle, j, at, wantStatus)
				continue
			}
			if prev, dup := callIDs[*at.CallID]; dup {
				t.Errorf("call %s is an attempt of %s and %s", *at.CallID, prev, r.ID)
			}
			callIDs[*at.CallID] = r.ID
			if j > 0 {
				if gap := parseTime(t, at.StartedAt).Sub(parseTime(t, *r.Attempts[j-1].EndedAt)); gap < time.Second {
					t.Errorf("recipient %s retried %v after its last call ended, want at least the 1 s delay", r.PlatformHandle, gap)
				}
			}
			var cl campaignCallObj
			harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+*at.CallID, nil, &cl), http.StatusOK, "GET call")
			if str(cl.CampaignID) != c.ID || str(cl.RecipientID) != r.ID || str(cl.VersionID) != a.ActiveVersionID {
				t.Errorf("call %s names campaign %q recipient %q version %q, want %s %s %s", cl.ID, str(cl.CampaignID), str(cl.RecipientID),
					str(cl.VersionID), c.ID, r.ID, a.ActiveVersionID)
			}
			calls = append(calls, cl)
		}
	}
	if len(calls) != 11 {
		t.Errorf("%d calls placed, want 11 (5 answered, 2 busy and 1 unanswered twice each)", len(calls))
	}
	// The sim saw each call once.
	simCalls := map[string]int{}
	for _, sc := range st.Sim.List() {
		if _, ok := callIDs[sc.CallID]; ok {
			simCalls[sc.CallID]++
		}
	}
	for id, n := range simCalls {
		if n != 1 {
			t.Errorf("the sim was dialled %d times for call %s", n, id)
		}
	}
	// Never more than two calls at once.
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, cl := range calls {
		if cl.EndedAt == nil {
			t.Errorf("call %s has not ended", cl.ID)
			continue
		}
		edges = append(edges, edge{parseTime(t, cl.StartedAt), 1}, edge{parseTime(t, *cl.EndedAt), -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta
		}
		return edges[i].at.Before(edges[j].at)
	})
	live, peak := 0, 0
	for _, e := range edges {
		live += e.delta
		peak = max(peak, live)
	}
	if peak > 2 || peak < 1 {
		t.Errorf("at most %d calls were live at once, want 2 at most", peak)
	}

	// call.ended of each call names the campaign and the recipient.
	for id, rid := range callIDs {
		harness.WaitFor(t, 15*time.Second, "call.ended of "+id, func() bool {
			return endedEventFor(t, st, id) != nil
		})
		var d callevent.CallEnded
		if err := json.Unmarshal(endedEventFor(t, st, id).Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.CampaignID != c.ID || d.RecipientID != rid {
			t.Errorf("call.ended of %s names campaign %q recipient %q, want %s %s", id, d.CampaignID, d.RecipientID, c.ID, rid)
		}
	}

	// campaign.completed, once, with the same counts.
	evs, err := st.Store.ListEvents(context.Background(), st.AccountID, callevent.TypeCampaignCompleted, listing.Query{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var mine []callevent.CampaignCompleted
	for _, e := range evs {
		var d callevent.CampaignCompleted
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.CampaignID == c.ID {
			mine = append(mine, d)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("%d campaign.completed events, want 1", len(mine))
	}
	for k, n := range want {
		if mine[0].Counts[k] != n {
			t.Errorf("campaign.completed counts = %v, want %v", mine[0].Counts, want)
			break
		}
	}
	checkReport(t, st, c.ID, rs, calls)

	// A completed campaign takes no lifecycle step.
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/pause", nil, nil), http.StatusConflict, "pause a completed campaign")
}

// checkReport: the completed campaign's report agrees with its recipients and their
// calls' records (the 11 calls: 5 answered, 2 busy twice each, 1 unanswered twice),
// and its CSV has a row per recipient in list order.
func checkReport(t *testing.T, st *harness.Stack, id string, rs []recipientObj, calls []campaignCallObj) {
	t.Helper()
	var rep struct {
		Status            string         `json:"status"`
		Recipients        int            `json:"recipients"`
		Calls             int            `json:"calls"`
		InProgress        int            `json:"in_progress"`
		Outcomes          map[string]int `json:"outcomes"`
		Answered          int            `json:"answered"`
		ConnectRate       *float64       `json:"connect_rate"`
		AverageDurationMS *int64         `json:"average_duration_ms"`
		DurationMS        int64          `json:"duration_ms"`
		Hours             []struct {
			Calls int `json:"calls"`
		} `json:"hours"`
	}
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+id+"/report", nil, &rep), http.StatusOK, "GET report")
	var total, answered int64
	for _, cl := range calls {
		if cl.DurationMS == nil {
			t.Fatalf("call %s has no duration", cl.ID)
		}
		total += *cl.DurationMS
		if cl.AnsweredAt != nil {
			answered += *cl.DurationMS
		}
	}
	want := map[string]int{"answered": 5, "busy": 4, "no_answer": 2, "failed": 0, "voicemail": 0, "not_placed": 0}
	for o, n := range want {
		if rep.Outcomes[o] != n {
			t.Errorf("report outcomes %v, want %v", rep.Outcomes, want)
			break
		}
	}
	hourCalls := 0
	for _, h := range rep.Hours {
		hourCalls += h.Calls
	}
	if rep.Status != "completed" || rep.Recipients != len(rs) || rep.Calls != 11 || rep.InProgress != 0 || rep.Answered != 5 ||
		rep.ConnectRate == nil || *rep.ConnectRate != 5.0/11 || rep.DurationMS != total || hourCalls != 11 ||
		rep.AverageDurationMS == nil || *rep.AverageDurationMS != answered/5 {
		t.Errorf("report %+v; want the completed campaign's 11 calls, 5 answered (connect rate 5/11), %d ms in all, %d ms on average",
			rep, total, answered/5)
	}

	status, raw, err := st.Request(http.MethodGet, "/v1/campaigns/"+id+"/report?format=csv", nil, st.APIKey)
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET report?format=csv = %d %v %s", status, err, raw)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatalf("the results CSV: %v\n%s", err, raw)
	}
	if len(rows) != len(rs)+1 || strings.Join(rows[0], ",") != "recipient_id,platform_handle,status,calls,last_call_id,last_outcome,last_end_reason,last_started_at,last_ended_at,duration_ms,voicemail_left" {
		t.Fatalf("the results CSV:\n%s\nwant the header and %d rows", raw, len(rs))
	}
	for i, r := range rs {
		row, last := rows[i+1], r.Attempts[len(r.Attempts)-1]
		if row[0] != r.ID || row[1] != r.PlatformHandle || row[2] != r.Status || row[3] != strconv.Itoa(len(r.Attempts)) ||
			row[4] != str(last.CallID) || row[5] != str(last.Outcome) || row[7] != last.StartedAt || row[8] != str(last.EndedAt) {
			t.Errorf("CSV row %d = %q, want recipient %+v", i+1, row, r)
		}
	}
}

// endedEventFor is the call.ended of callID, or nil.
func endedEventFor(t *testing.T, st *harness.Stack, callID string) *callevent.Event {
	t.Helper()
	evs, err := st.Store.ListEvents(context.Background(), st.AccountID, callevent.TypeCallEnded, listing.Query{Limit: listing.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		var d callevent.CallEnded
		if json.Unmarshal(e.Data, &d) == nil && d.CallID == callID {
			return &e
		}
	}
	return nil
}

// TestCampaignPauseAndCancel: a paused campaign dials nobody until it resumes; a
// canceled one places no more calls and cancels the recipients not called.
func TestCampaignPauseAndCancel(t *testing.T) {
	st := tenant(t)
	a := publishAssistant(t, st, hangUpName, "Hello there.", "ava_maya")
	var recipients []map[string]any
	for range 6 {
		recipients = append(recipients, map[string]any{"platform_handle": platformsim.HandleBusy})
	}
	var c campaignObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns", map[string]any{
		"assistant_id": a.ID, "recipients": recipients,
		"settings": map[string]any{"max_concurrent_calls": 1, "calls_per_second": 1,
			"retry": map[string]any{"max_attempts": 1, "on": []string{}}},
	}, &c), http.StatusCreated, "POST /v1/campaigns")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/resume", nil, nil), http.StatusConflict, "resume a draft")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/start", nil, &c), http.StatusOK, "start")
	harness.WaitFor(t, 30*time.Second, "a first recipient done", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
		return c.Counts["busy"] >= 1
	})
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/pause", nil, &c), http.StatusOK, "pause")
	if c.Status != "paused" {
		t.Fatalf("status %s, want paused", c.Status)
	}
	// Let a call under way finish, then nothing moves.
	time.Sleep(2 * time.Second)
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
	before := c.Counts["busy"]
	time.Sleep(3 * time.Second)
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
	if c.Counts["busy"] != before || c.Counts["calling"] != 0 {
		t.Fatalf("a paused campaign went on calling: %v (busy was %d)", c.Counts, before)
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/resume", nil, &c), http.StatusOK, "resume")
	harness.WaitFor(t, 30*time.Second, "another recipient done after resume", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
		return c.Counts["busy"] > before
	})
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/campaigns/"+c.ID+"/cancel", nil, &c), http.StatusOK, "cancel")
	harness.WaitFor(t, 30*time.Second, "nothing pending or calling", func() bool {
		harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
		return c.Counts["pending"] == 0 && c.Counts["calling"] == 0
	})
	if c.Status != "canceled" || c.Counts["canceled"] == 0 || c.Counts["busy"]+c.Counts["canceled"] != 6 {
		t.Errorf("canceled campaign = %s %v, want canceled, the rest of 6 canceled", c.Status, c.Counts)
	}
	done := c.Counts["busy"]
	time.Sleep(2 * time.Second)
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/campaigns/"+c.ID, nil, &c), http.StatusOK, "GET")
	if c.Counts["busy"] != done {
		t.Errorf("a canceled campaign placed more calls: %v", c.Counts)
	}
}
