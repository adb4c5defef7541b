package httpapi_test

// Fuzz targets for request decoding and validation. Each sends an arbitrary body through
// the whole handler stack (API.Handler on a SQLite store) and holds it to the contract:
//
//   - never a 5xx, never a panic (the recoverer would turn one into a 500);
//   - every response fits openapi.yaml: a documented status, the error shape, headers;
//   - a 4xx writes nothing: no row of any table is inserted, updated or deleted;
//   - a 2xx request is one the document accepts too, so the request schemas never
//     refuse what the handlers take.
//
// Bodies may name the fixture's resources with placeholders ($ASST, $DRAFT, $ARCH, $VER,
// $LINE, $WHEP, $EVT, $CALL) so the fuzzer reaches past "no such id". POST /v1/sessions is
// not fuzzed here: a body it accepts creates a LiveKit room, which the session contract
// test covers. CI runs each target briefly:
//
//	go test ./shared/httpapi -run '^$' -fuzz '^FuzzAssistantCreate$' -fuzztime 15s
//	go test ./shared/httpapi -run '^$' -fuzz '^FuzzLineUpdate$' -fuzztime 15s
//	go test ./shared/httpapi -run '^$' -fuzz '^FuzzRequestBody$' -fuzztime 15s

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/decision"
	"github.com/bridgeline/bridgeline/shared/httpapi/contracttest"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

// fuzzEnv is a stack with fixture resources and a count of every row written.
type fuzzEnv struct {
	st    *stack
	doc   *openapi3.T
	subst *strings.Replacer
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	f.Helper()
	st := newStack(f, nil)
	ctx := context.Background()
	name, prompt, greeting, avatar := "Ada", "Be kind.", "Hi, I'm Ada.", persona.Avatars[0].ID
	full := assistant.Fields{Name: &name, SystemPrompt: &prompt, Greeting: &greeting, AvatarID: &avatar}
	pub, err := st.assistants.Create(ctx, st.acctID, full)
	if err != nil {
		f.Fatal(err)
	}
	if pub, err = st.assistants.Publish(ctx, st.acctID, pub.ID); err != nil {
		f.Fatal(err)
	}
	draft, err := st.assistants.Create(ctx, st.acctID, assistant.Fields{Name: &name})
	if err != nil {
		f.Fatal(err)
	}
	arch, err := st.assistants.Create(ctx, st.acctID, full)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := st.assistants.Archive(ctx, st.acctID, arch.ID); err != nil {
		f.Fatal(err)
	}
	hookURL := "http://127.0.0.1:9/hooks" // never called: no delivery worker runs here
	ep, err := st.endpts.Create(ctx, st.acctID, webhookendpoint.Input{URL: &hookURL})
	if err != nil {
		f.Fatal(err)
	}
	evt := callevent.Event{ID: ident.New("evt"), AccountID: st.acctID, Type: callevent.TypeCallEnded,
		CreatedAt: time.Now().UTC(), Data: []byte(`{"call_id":"call_01jd3f4g5h6j7k8m9n0p1q2r3t","direction":"outbound","from":"+15550100001",` +
			`"to":"+15550100002","media":"video","handled_by":"customer","started_at":"2026-11-22T07:00:00.000Z",` +
			`"answered_at":"2026-11-22T07:00:01.000Z","ended_at":"2026-11-22T07:01:00.000Z","duration_ms":59000,` +
			`"end_reason":"deleted","ended_by":"customer"}`)}
	if err := insertEvent(ctx, st.store, evt); err != nil {
		f.Fatal(err)
	}
	callID := ident.New("call")
	if err := st.store.CreateDecision(ctx, decision.Record{CallID: callID, AccountID: st.acctID, LineID: st.lineID,
		EventID: ident.New("evt"), AnswerBy: time.Now().Add(24 * time.Hour), CreatedAt: time.Now().UTC(),
		Session: callevent.Session{SessionID: ident.New("ses"), CallID: callID, RTCURL: "ws://127.0.0.1:7880",
			ParticipantToken: "eyJhbGciOiJIUzI1NiJ9.e30.sig", ExpiresAt: time.Now().Add(10 * time.Minute)}}); err != nil {
		f.Fatal(err)
	}
	if err := countWrites(ctx, st.store.DB()); err != nil {
		f.Fatal(err)
	}
	return &fuzzEnv{st: st, doc: contracttest.LoadSpec(f), subst: strings.NewReplacer(
		"$ASST", pub.ID, "$DRAFT", draft.ID, "$ARCH", arch.ID, "$VER", pub.ActiveVersionID,
		"$LINE", st.lineID, "$WHEP", ep.ID, "$EVT", evt.ID, "$CALL", callID,
	)}
}

func insertEvent(ctx context.Context, s *sqlite.Store, evt callevent.Event) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := sqlite.InsertEvents(ctx, tx, []callevent.Event{evt}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// countWrites adds triggers that count every insert, update and delete on every table of
// the store, so a test can tell whether a request wrote anything at all.
func countWrites(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE fuzz_writes (n INTEGER NOT NULL); INSERT INTO fuzz_writes VALUES (0)`); err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'fuzz_writes'`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, n)
	}
	rows.Close()
	if len(tables) == 0 {
		return fmt.Errorf("no tables to watch")
	}
	for _, tbl := range tables {
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			if tbl == "api_keys" && op == "UPDATE" {
				// Authentication records the key's last use: bookkeeping of every
				// request, not a write the request asked for. A revocation counts.
				op = "UPDATE OF revoked"
			}
			q := fmt.Sprintf(`CREATE TRIGGER "fuzz_%s_%s" AFTER %s ON "%s" BEGIN UPDATE fuzz_writes SET n = n + 1; END`, tbl, op, op, tbl)
			if _, err := db.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *fuzzEnv) writes(t *testing.T) int64 {
	var n int64
	if err := e.st.store.DB().QueryRow(`SELECT n FROM fuzz_writes`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// contentTypes are the Content-Type headers the fuzzers pick from.
var contentTypes = []string{"application/json", "", "application/json; charset=utf-8", "text/plain"}

// send serves one request through the stack and checks the contract's promises.
func (e *fuzzEnv) send(t *testing.T, method, path string, body []byte, contentType string) {
	path = e.subst.Replace(path)
	body = []byte(e.subst.Replace(string(body)))
	before := e.writes(t)
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.st.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.st.handler.ServeHTTP(rec, req)
	res := rec.Result()
	raw := rec.Body.Bytes()
	if res.StatusCode >= 500 {
		t.Fatalf("%s %s %q = %d %s: a request body must never cause a server error", method, path, body, res.StatusCode, raw)
	}
	ctx := context.Background()
	if err := contracttest.CheckResponse(ctx, e.doc, req, body, res.StatusCode, res.Header, raw); err != nil {
		t.Fatalf("%s %s %q = %d %s: %v", method, path, body, res.StatusCode, raw, err)
	}
	if res.StatusCode >= 400 {
		if after := e.writes(t); after != before {
			t.Fatalf("%s %s %q = %d %s, yet %d row(s) were written", method, path, body, res.StatusCode, raw, after-before)
		}
		return
	}
	if err := contracttest.CheckRequest(ctx, e.doc, req, body); err != nil {
		t.Fatalf("%s %s %q = %d: the server accepted a request openapi.yaml refuses: %v", method, path, body, res.StatusCode, err)
	}
}

// assistantBodies seed the assistant create and update targets.
var assistantBodies = []string{
	`{"name":"Ada"}`,
	`{"name":"Ada","system_prompt":"Be kind.","greeting":"Hi.","avatar_id":"ava_iris","framing":{"shot":"wide","position":"left"}}`,
	`{"name":"Ada","framing":{"shot":"close_up"}}`,
	`{"name":"Ada","avatar_id":""}`,
	`{}`,
	``,
	`{"name":`,
	`{"name":null}`,
	`{"name":"   "}`,
	`{"name":5}`,
	`{"name":"Ada","framing":null}`,
	`{"name":"Ada","framing":{"shot":"huge"}}`,
	`{"name":"Ada","avatar_id":"ava_nope"}`,
	`{"name":"Ada","nmae":"x"}`,
	`{"name":"Ada"} {}`,
	`["Ada"]`,
	`"Ada"`,
	`{"name":"\u00e9\ud83d\ude00"}`,
	`{"name":"a","name":"b"}`,
	`{"name":"` + strings.Repeat("n", 201) + `"}`,
}

func FuzzAssistantCreate(f *testing.F) {
	for _, b := range assistantBodies {
		f.Add([]byte(b))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		e.send(t, http.MethodPost, "/v1/assistants", body, "application/json")
	})
}

func FuzzLineUpdate(f *testing.F) {
	for _, b := range []string{
		`{"name":"Front desk"}`,
		`{"inbound_mode":"customer_decides","decision_timeout_seconds":5,"on_decision_timeout":"assistant"}`,
		`{"assistant_id":"$ASST"}`,
		`{"assistant_id":null}`,
		`{"assistant_id":"$DRAFT"}`,
		`{"assistant_id":"$ARCH"}`,
		`{"assistant_id":""}`,
		`{"decision_timeout_seconds":0}`,
		`{"decision_timeout_seconds":5.5}`,
		`{"decision_timeout_seconds":"5"}`,
		`{"inbound_mode":null}`,
		`{"handle":"+15550100009"}`,
		`{}`,
		``,
		`null`,
	} {
		f.Add([]byte(b))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		e.send(t, http.MethodPatch, "/v1/lines/$LINE", body, "application/json")
	})
}

// bodyRoutes are every route that reads a request body.
var bodyRoutes = []struct{ method, path string }{
	{http.MethodPost, "/v1/assistants"},
	{http.MethodPatch, "/v1/assistants/$DRAFT"},
	{http.MethodPatch, "/v1/assistants/$ARCH"},
	{http.MethodPost, "/v1/assistants/$DRAFT/publish"},
	{http.MethodPost, "/v1/assistants/$ASST/activate"},
	{http.MethodPost, "/v1/assistants/$ASST/duplicate"},
	{http.MethodPost, "/v1/assistants/$DRAFT/archive"},
	{http.MethodPatch, "/v1/lines/$LINE"},
	{http.MethodPost, "/v1/lines/$LINE/assign"},
	{http.MethodPost, "/v1/webhook_endpoints"},
	{http.MethodPatch, "/v1/webhook_endpoints/$WHEP"},
	{http.MethodPost, "/v1/webhook_endpoints/$WHEP/rotate_secret"},
	{http.MethodPost, "/v1/events/$EVT/redeliver"},
	{http.MethodPost, "/v1/calls/$CALL/answer"},
}

func FuzzRequestBody(f *testing.F) {
	seeds := []string{
		``, `{}`, `[]`, `null`, `{"x":1}`,
		`{"version_id":"$VER"}`, `{"version_id":""}`,
		`{"name":"Copy"}`, `{"name":null}`,
		`{"assistant_id":"$ASST"}`, `{"assistant_id":"$ARCH"}`,
		`{"url":"https://example.test/hooks","events":["call.ended"],"description":"prod"}`,
		`{"url":"ftp://example.test/"}`, `{"events":["*","call.ended"]}`, `{"status":"disabled"}`, `{"status":"enabled"}`,
		`{"endpoint_id":"$WHEP"}`, `{"endpoint_id":"whep_nope"}`,
		`{"action":"accept"}`, `{"action":"decline"}`, `{"action":""}`,
	}
	for i, s := range append(seeds, assistantBodies...) {
		f.Add(uint8(i), []byte(s), uint8(i%len(contentTypes)))
	}
	e := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, route uint8, body []byte, ct uint8) {
		r := bodyRoutes[int(route)%len(bodyRoutes)]
		e.send(t, r.method, r.path, body, contentTypes[int(ct)%len(contentTypes)])
	})
}
