// Package stores_test runs the HTTP API on each store: the responses of the assistant
// routes stay within Lambda's response limit on SQLite and on DynamoDB Local, and the
// largest response an idempotent route stores replays byte for byte from each.
package stores_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/idempotency"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// lambdaResponseLimit is the largest response Lambda returns: the proxy's JSON envelope,
// with the body quoted inside it.
const lambdaResponseLimit = 6 * 1000 * 1000

// envelopeSize is how many bytes body takes as an API Gateway (HTTP API) proxy response.
func envelopeSize(t testing.TB, body []byte) int {
	t.Helper()
	b, err := json.Marshal(events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: string(body),
		Headers: map[string]string{"Content-Type": "application/json", "Request-Id": "req_01jd3f4g5h6j7k8m9n0p1q2r3t"}})
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// Store is what the API needs of a store here.
type Store interface {
	account.Store
	assistant.Store
	line.Store
	idempotency.Store
}

// TestBoundedAssistantResponses: on SQLite, 80 publishes, the count that made
// GET /v1/assistants/{id} 6.5 MB; on DynamoDB Local fewer (each reads every version
// back): 24 at the field limits are 3.2 MB of versions, and the largest publish response
// is stored, in parts, as an idempotency record.
func TestBoundedAssistantResponses(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "bounded.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		boundedAssistantResponses(t, s, 80)
	})
	t.Run("dynamodb", func(t *testing.T) {
		boundedAssistantResponses(t, dynamolocal.NewStore(t), 24)
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// boundedAssistantResponses publishes an assistant n times at the field limits, in the
// characters that JSON writes longest (a control character is 6 bytes, \u0001), each
// publish with an Idempotency-Key, through the HTTP API on s. Then: the assistant object
// carries the newest assistant.ObjectVersions and says more exist; every response fits
// Lambda's limit; GET .../versions pages through all n, newest first; and a replay of the
// last publish (the largest response an idempotent route stores) returns the same bytes.
func boundedAssistantResponses(t *testing.T, s Store, n int) {
	api, err := httpapi.New(s, s, (&httpapi.Assistants{Service: &assistant.Service{Store: s, Now: time.Now}}).Routes(),
		httpapi.WithLog(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	_, key, err := (&account.Service{Store: s, Now: time.Now}).Create(ctx(t), "Big Co", false)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string, headers ...string) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx(t), method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		if size := envelopeSize(t, raw); size > lambdaResponseLimit {
			t.Errorf("%s %s: %d bytes as a Lambda response, over the %d limit", method, path, size, lambdaResponseLimit)
		}
		return res.StatusCode, res.Header, raw
	}
	worst := func(chars int) string { return strings.Repeat("\x01", chars) }
	fields, _ := json.Marshal(map[string]any{"name": worst(assistant.MaxNameLen), "system_prompt": worst(assistant.MaxSystemPromptLen),
		"greeting": worst(assistant.MaxGreetingLen), "avatar_id": persona.Avatars[0].ID})
	status, _, raw := do("POST", "/v1/assistants", string(fields))
	if status != http.StatusCreated {
		t.Fatalf("create = %d %.300s", status, raw)
	}
	var created struct{ ID string }
	json.Unmarshal(raw, &created)
	path := "/v1/assistants/" + created.ID

	var last []byte
	for i := 1; i <= n; i++ {
		status, _, last = do("POST", path+"/publish", "", "Idempotency-Key", fmt.Sprintf("publish-%d", i))
		if status != http.StatusCreated {
			t.Fatalf("publish %d = %d %.300s", i, status, last)
		}
	}
	t.Logf("largest idempotent response (publish %d at the field limits): %d bytes, %d as a Lambda response",
		n, len(last), envelopeSize(t, last))
	status, hdr, replay := do("POST", path+"/publish", "", "Idempotency-Key", fmt.Sprintf("publish-%d", n))
	if status != http.StatusCreated || hdr.Get("Idempotent-Replayed") != "true" || string(replay) != string(last) {
		t.Errorf("replay of publish %d = %d, replayed %q, %d bytes; want 201, true and the first %d bytes",
			n, status, hdr.Get("Idempotent-Replayed"), len(replay), len(last))
	}

	var got struct {
		Versions []struct {
			ID     string
			Number int
		}
		VersionCount    int  `json:"version_count"`
		HasMoreVersions bool `json:"has_more_versions"`
	}
	_, _, raw = do("GET", path, "")
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("GET /v1/assistants/{id} after %d publishes: %d bytes, %d as a Lambda response", n, len(raw), envelopeSize(t, raw))
	wantShown := min(n, assistant.ObjectVersions)
	if len(got.Versions) != wantShown || got.VersionCount != n || got.HasMoreVersions != (n > wantShown) {
		t.Errorf("assistant object: %d versions, version_count %d, has_more_versions %v; want %d, %d, %v",
			len(got.Versions), got.VersionCount, got.HasMoreVersions, wantShown, n, n > wantShown)
	}
	for i, v := range got.Versions {
		if want := n - wantShown + 1 + i; v.Number != want {
			t.Errorf("versions[%d].number = %d, want %d (the newest, oldest first)", i, v.Number, want)
		}
	}

	var numbers []int
	pages, after := 0, ""
	for {
		q := path + "/versions?limit=100"
		if after != "" {
			q += "&starting_after=" + after
		}
		status, _, raw := do("GET", q, "")
		if status != http.StatusOK {
			t.Fatalf("GET %s = %d %.300s", q, status, raw)
		}
		var page struct {
			Data []struct {
				ID     string
				Number int
			}
			HasMore bool `json:"has_more"`
		}
		json.Unmarshal(raw, &page)
		pages++
		for _, v := range page.Data {
			numbers = append(numbers, v.Number)
		}
		if !page.HasMore || len(page.Data) == 0 || pages > n {
			break
		}
		after = page.Data[len(page.Data)-1].ID
	}
	ok := len(numbers) == n
	for i, num := range numbers {
		ok = ok && num == n-i
	}
	if !ok {
		t.Errorf("versions paged = %v, want %d down to 1", numbers, n)
	}
	t.Logf("GET .../versions?limit=100: %d versions in %d pages", len(numbers), pages)
}
