package sessions_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
)

// TestPinnedVersion: a line pinned to version 1 answers with version 1's greeting while
// version 2 is active; unpinned, the next call runs version 2.
func TestPinnedVersion(t *testing.T) {
	st := tenant(t)
	st.StartWorker(t, nil, worker.Options{})
	a := publishAssistant(t, st, "Front desk", "Hello from version one.", "ava_theo")
	v1 := a.ActiveVersionID
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/assistants/"+a.ID, map[string]any{"greeting": "Hello from version two."}, nil),
		http.StatusOK, "PATCH draft")
	var published assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &published), http.StatusCreated, "publish v2")
	v2 := published.ActiveVersionID
	lineID := st.Lines[st.Handles[0]].ID
	var l struct {
		VersionID *string `json:"version_id"`
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/lines/"+lineID, map[string]any{"version_id": v1}, &l), http.StatusOK, "pin v1")
	if l.VersionID == nil || *l.VersionID != v1 {
		t.Fatalf("line version_id = %v, want %s", l.VersionID, v1)
	}

	greetingOf := func(want string) string {
		t.Helper()
		placed := ring(t, st, "audio", platformsim.PartyOptions{})
		waitRecord(t, st, placed.CallID, "the greeting", func(c recordObj) bool { return c.Metrics != nil && c.Metrics.FirstGreetingMS != nil })
		// The record keeps what the caller heard: let the short greeting finish.
		time.Sleep(4 * time.Second)
		hangupSim(t, st, placed.ID)
		c := waitRecord(t, st, placed.CallID, "the completed record", func(c recordObj) bool { return c.EndedAt != nil && len(c.Turns) > 0 })
		if str(c.VersionID) != want {
			t.Errorf("call %s ran version %s, want %s", c.ID, str(c.VersionID), want)
		}
		return c.Turns[0].Text
	}
	if got := greetingOf(v1); got != "Hello from version one." {
		t.Errorf("pinned line greeted %q, want version one's greeting", got)
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/lines/"+lineID, map[string]any{"version_id": nil}, &l), http.StatusOK, "unpin")
	if l.VersionID != nil {
		t.Fatalf("after unpinning, line version_id = %v, want null", *l.VersionID)
	}
	if got := greetingOf(v2); got != "Hello from version two." {
		t.Errorf("unpinned line greeted %q, want the active version two's", got)
	}
}
