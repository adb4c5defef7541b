package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/usage"
)

// TestContractUsage: GET /v1/usage sums the calls that ended per UTC day of the range,
// every day listed, another account's calls apart; bad ranges are 400s naming the
// parameter.
func TestContractUsage(t *testing.T) {
	c := newContract(t, nil)
	ctx := context.Background()
	now := time.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 1, 0, time.UTC) // on today's date whatever the hour
	yesterday := today.AddDate(0, 0, -1)
	var want usage.Counts
	end := func(accountID string, started time.Time, ms int64, w persona.Usage) {
		rec := call.Call{ID: ident.New("call"), AccountID: accountID, Direction: call.Inbound, LineID: c.st.lineID,
			Status: call.StatusRinging, HandledBy: call.HandledByAssistant, Platform: sim.Name, StartedAt: started}
		rec.Answer(started)
		rec.End(call.StatusEnded, call.ReasonRemoteHangup, call.EndedByRemote, started.Add(time.Duration(ms)*time.Millisecond),
			func() string { return ident.New("evt") })
		rec.CountUsage(w)
		if err := c.st.store.SaveCall(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		if accountID == c.st.acctID {
			want = want.Add(rec.Usage.Counts())
		}
	}
	end(c.st.acctID, yesterday, 61001, persona.Usage{STTAudioMS: 9000, TTSCharacters: 300, LLMPromptTokens: 1200, LLMCompletionTokens: 80})
	end(c.st.acctID, today, 999, persona.Usage{TTSCharacters: 20})
	other, _, err := c.st.accounts.Create(ctx, "Third", false)
	if err != nil {
		t.Fatal(err)
	}
	end(other.ID, today, 5000, persona.Usage{TTSCharacters: 99})

	q := func(gte, lte time.Time) string {
		return "/v1/usage?created%5Bgte%5D=" + url.QueryEscape(gte.Format(time.RFC3339)) + "&created%5Blte%5D=" + fmt.Sprint(lte.Unix())
	}
	rep := c.OK("GET", q(yesterday, today), "", 200)
	if rep.Str("object") != "usage" || rep.Str("from") != usage.Date(yesterday) || rep.Str("to") != usage.Date(today) {
		t.Fatalf("usage = %s", rep.Raw)
	}
	days := rep.Body["data"].([]any)
	total := rep.Body["total"].(map[string]any)
	if len(days) != 2 || total["calls"] != float64(2) || total["billable_seconds"] != float64(62+1) ||
		total["duration_ms"] != float64(want.DurationMS) || total["tts_characters"] != float64(320) ||
		total["llm_prompt_tokens"] != float64(1200) || days[0].(map[string]any)["billable_seconds"] != float64(62) {
		t.Errorf("usage = %s, want 2 days summing to %+v", rep.Raw, want)
	}
	// The default range: the 30 days up to today, the calls among them.
	def := c.OK("GET", "/v1/usage", "", 200)
	if n := len(def.Body["data"].([]any)); n != 30 || def.Body["total"].(map[string]any)["calls"] != float64(2) {
		t.Errorf("default usage: %d days, total %v", n, def.Body["total"])
	}
	c.Fail("GET", q(today.AddDate(0, 0, -92), today), "", 400, "parameter_invalid")
	c.OK("GET", q(today.AddDate(0, 0, -91), today), "", 200)
	c.Fail("GET", q(today, yesterday), "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/usage?created%5Bgte%5D=yesterday", "", 400, "parameter_invalid")
	c.Fail("GET", "/v1/usage?day=1", "", 400, "parameter_unknown")
	c.RequireCoverage(func(p string) bool { return p == "/v1/usage" })
}
