package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// Passthrough routes are public, reach the handler with their path values, and keep its
// own status, headers and body; methods and paths outside the patterns stay the API's.
func TestPassthroughRoutesAreServedByTheirHandler(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "api.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, r.Method+" "+r.PathValue("id"))
	})
	routes := httpapi.Passthrough("own", own, "POST /own/{id}", "GET /own/{id}")
	for _, rt := range routes {
		if rt.Function != "own" || !rt.Public {
			t.Errorf("route %s %s: function %q public %v, want own and public", rt.Method, rt.Pattern, rt.Function, rt.Public)
		}
	}
	api, err := httpapi.New(s, s, routes)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		name, method, path string
		wantStatus         int
		wantBody           string
	}{
		{"post without a key", http.MethodPost, "/own/a1", http.StatusTeapot, "POST a1"},
		{"get without a key", http.MethodGet, "/own/b2", http.StatusTeapot, "GET b2"},
		{"method outside the patterns", http.MethodDelete, "/own/a1", http.StatusMethodNotAllowed, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != c.wantStatus {
				t.Fatalf("%s %s = %d %s, want %d", c.method, c.path, res.StatusCode, b, c.wantStatus)
			}
			if c.wantBody != "" && (string(b) != c.wantBody || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain")) {
				t.Errorf("body %q (%s), want %q as text/plain", b, res.Header.Get("Content-Type"), c.wantBody)
			}
		})
	}
}
