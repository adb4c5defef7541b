package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The ECS agent's endpoint is not runnable here; this server speaks its protocol.
func TestProtectorFollowsCalls(t *testing.T) {
	puts := make(chan map[string]any, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Path != "/v3/task/task-protection/v1/state" {
			http.NotFound(w, r)
			return
		}
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("body %q: %v", b, err)
		}
		puts <- m
		w.Write([]byte(`{"protection":{}}`))
	}))
	defer srv.Close()

	p := newProtector(srv.URL+"/v3/task", slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	defer func() { cancel(); <-done }()

	next := func() map[string]any {
		select {
		case m := <-puts:
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no request to the agent endpoint")
			return nil
		}
	}
	p.set(true)
	if m := next(); m["ProtectionEnabled"] != true || m["ExpiresInMinutes"] != 60.0 {
		t.Errorf("first call: %v, want protection on for 60 min", m)
	}
	p.set(true) // a second call changes nothing
	p.set(false)
	if m := next(); m["ProtectionEnabled"] != false {
		t.Errorf("last call ended: %v, want protection off", m)
	}
	select {
	case m := <-puts:
		t.Errorf("unexpected request %v", m)
	default:
	}
}
