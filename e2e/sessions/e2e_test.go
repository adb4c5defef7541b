package sessions_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/livekit/protocol/auth"
	"github.com/livekit/protocol/livekit"
	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/platformsim"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	code := m.Run()
	closeEngines()
	if pkg.stack != nil {
		pkg.stack.Close()
	}
	os.Exit(code)
}

// pkg is the one stack the package's tests share, started by the first test that needs
// it; each test works in its own tenant (account and lines).
var pkg struct {
	once  sync.Once
	stack *harness.Stack
	err   error
}

// Limits of the shared stack: the dispatch watchdog is shorter than the default so the
// watchdog test is quick, yet far above a worker's first report here (about a second).
const (
	testDispatchTimeout = 6 * time.Second
)

// tenant returns a fresh account on the package's shared stack.
func tenant(t *testing.T) *harness.Stack {
	t.Helper()
	harness.SkipShort(t)
	pkg.once.Do(func() {
		pkg.stack, pkg.err = harness.New(harness.Options{DispatchTimeout: testDispatchTimeout, ToolClient: toolClient(), LocalDelivery: true})
	})
	if pkg.err != nil {
		t.Fatalf("start the shared stack: %v", pkg.err)
	}
	return pkg.stack.Tenant(t)
}

// sessionObj is the session object as a client reads it.
type sessionObj struct {
	ID             string  `json:"id"`
	SessionID      string  `json:"session_id"`
	CallID         string  `json:"call_id"`
	Status         string  `json:"status"`
	Mode           string  `json:"mode"`
	Media          string  `json:"media"`
	RTCURL         string  `json:"rtc_url"`
	EndReason      *string `json:"end_reason"`
	CreatedAt      string  `json:"created_at"`
	AnsweredAt     *string `json:"answered_at"`
	EndedAt        *string `json:"ended_at"`
	AssistantID    *string `json:"assistant_id"`
	VersionID      *string `json:"version_id"`
	PlatformHandle string  `json:"platform_handle"`
}

// created is the POST /v1/sessions answer.
type created struct {
	sessionObj
	ParticipantToken    string `json:"participant_token"`
	ParticipantIdentity string `json:"participant_identity"`
	WatchOnly           bool   `json:"watch_only"`
	ExpiresAt           string `json:"expires_at"`
}

// callObj is the call object as a client reads it.
type callObj struct {
	ID         string          `json:"id"`
	Direction  string          `json:"direction"`
	Media      string          `json:"media"`
	Status     string          `json:"status"`
	HandledBy  string          `json:"handled_by"`
	AnsweredAt *string         `json:"answered_at"`
	DurationMS *int64          `json:"duration_ms"`
	EndReason  *string         `json:"end_reason"`
	EndedBy    *string         `json:"ended_by"`
	VersionID  *string         `json:"version_id"`
	SessionID  *string         `json:"session_id"`
	Transcript json.RawMessage `json:"transcript"`
}

// tokenObj is the POST /v1/sessions/{id}/tokens answer.
type tokenObj struct {
	SessionID           string `json:"session_id"`
	RTCURL              string `json:"rtc_url"`
	ParticipantToken    string `json:"participant_token"`
	ParticipantIdentity string `json:"participant_identity"`
	ParticipantName     string `json:"participant_name"`
	WatchOnly           bool   `json:"watch_only"`
	ExpiresAt           string `json:"expires_at"`
}

func createSession(t *testing.T, st *harness.Stack, body map[string]any) created {
	t.Helper()
	var out created
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions", body, &out), http.StatusCreated, "POST /v1/sessions")
	return out
}

// joinClient joins as the customer's client: it only subscribes, and counts the decoded
// video frames of each remote participant.
type client struct {
	*callerbot.Bot
	mu     sync.Mutex
	frames map[string]int // by participant identity
}

func joinClient(t *testing.T, url, token string) *client {
	t.Helper()
	c := &client{frames: map[string]int{}}
	bot, err := callerbot.Join(context.Background(), callerbot.Options{URL: url, Token: token, OnFrame: func(f callerbot.Frame) {
		c.mu.Lock()
		c.frames[f.Participant]++
		c.mu.Unlock()
	}})
	if err != nil {
		t.Fatalf("client join: %v", err)
	}
	c.Bot = bot
	t.Cleanup(bot.Leave)
	return c
}

// videoFrames counts the remote party's frames.
func (c *client) videoFrames() int { return c.videoFramesFrom(platform.ParticipantIdentity) }

// videoFramesFrom counts the frames of participants whose identity starts with prefix.
func (c *client) videoFramesFrom(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for id, f := range c.frames {
		if strings.HasPrefix(id, prefix) {
			n += f
		}
	}
	return n
}

func getSession(t *testing.T, st *harness.Stack, id string) sessionObj {
	t.Helper()
	var s sessionObj
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/sessions/"+id, nil, &s), http.StatusOK, "GET session")
	return s
}

func getCall(t *testing.T, st *harness.Stack, id string) callObj {
	t.Helper()
	var c callObj
	harness.Must(t, st.Do(t, http.MethodGet, "/v1/calls/"+id, nil, &c), http.StatusOK, "GET call")
	return c
}

func waitStatus(t *testing.T, st *harness.Stack, id, status string) sessionObj {
	t.Helper()
	var s sessionObj
	harness.WaitFor(t, 20*time.Second, "session "+status, func() bool {
		s = getSession(t, st, id)
		return s.Status == status
	})
	return s
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestVideoSessionDelete is the whole hosted-session path on a real livekit-server: the
// token names only its room and carries no admin grant, a client joining with it sees
// and hears the dialled sim party, DELETE disconnects the client, the token can no longer
// join, and the call record and call.ended are written once.
func TestVideoSessionDelete(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "video", "mode": "human"})
	if s.SessionID != s.ID || s.Status != session.StatusRinging || s.RTCURL != st.LiveKit.WSURL() || s.CallID == "" {
		t.Fatalf("created = %+v", s)
	}
	checkToken(t, st, s)

	cl := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)
	harness.WaitFor(t, 20*time.Second, "client decodes the party's video", func() bool { return cl.videoFrames() >= 3 })
	harness.WaitFor(t, 20*time.Second, "client hears the party", func() bool { return !cl.FirstSound().IsZero() })

	var ended sessionObj
	harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, &ended), http.StatusOK, "DELETE")
	if ended.Status != session.StatusEnded || str(ended.EndReason) != call.ReasonDeleted || ended.EndedAt == nil {
		t.Errorf("DELETE = %+v, want ended, deleted", ended)
	}
	select {
	case <-cl.Disconnected():
	case <-time.After(15 * time.Second):
		t.Fatal("client still connected after DELETE")
	}
	var again sessionObj
	harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, &again), http.StatusOK, "second DELETE")
	if a, b := mustJSON(again), mustJSON(ended); a != b {
		t.Errorf("second DELETE = %s, want the same %s", a, b)
	}
	if r, err := lksdk.ConnectToRoomWithToken(s.RTCURL, s.ParticipantToken, lksdk.NewRoomCallback()); err == nil {
		r.Disconnect()
		t.Fatal("the participant token joined after the session ended")
	}

	c := getCall(t, st, s.CallID)
	if c.Status != call.StatusEnded || str(c.EndReason) != call.ReasonDeleted || str(c.EndedBy) != call.EndedByCustomer ||
		c.Direction != call.Outbound || c.HandledBy != call.HandledByCustomer || c.AnsweredAt == nil || c.DurationMS == nil || *c.DurationMS <= 0 {
		t.Errorf("call record = %+v", c)
	}
	ev := eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
	var data callevent.CallEnded
	json.Unmarshal(ev.Data, &data)
	if data.EndReason != call.ReasonDeleted || data.SessionID != s.ID || data.DurationMS != *c.DurationMS {
		t.Errorf("call.ended data = %+v, want deleted, %s, %d ms", data, s.ID, *c.DurationMS)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallAnswered, s.CallID)
	harness.WaitFor(t, 10*time.Second, "sim call over", func() bool {
		sc, ok := st.Sim.ByCallID(s.CallID)
		return ok && sc.Final() && !sc.InRoom
	})

	var tok map[string]any
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/sessions/"+s.ID+"/tokens", nil, &tok), http.StatusConflict, "token for an ended session")
}

// checkToken decodes the participant token: roomJoin for this session's room only,
// publish/subscribe/data, no create, admin or list grant, exp equal to expires_at, 10 min.
func checkToken(t *testing.T, st *harness.Stack, s created) {
	t.Helper()
	v, err := auth.ParseAPIToken(s.ParticipantToken)
	if err != nil {
		t.Fatal(err)
	}
	claims, grants, err := v.Verify(st.LiveKit.Config().APISecret)
	if err != nil {
		t.Fatal(err)
	}
	vg := grants.Video
	if !vg.RoomJoin || vg.Room != s.ID || !vg.GetCanPublish() || !vg.GetCanSubscribe() || !vg.GetCanPublishData() {
		t.Errorf("grant = %+v, want join %s with publish, subscribe, data", vg, s.ID)
	}
	if vg.RoomCreate || vg.RoomAdmin || vg.RoomList || vg.RoomRecord || vg.Agent || vg.IngressAdmin {
		t.Errorf("grant = %+v carries an admin grant", vg)
	}
	exp := claims.ExpiresAt.Time.UTC().Format("2006-01-02T15:04:05.000Z")
	if exp != s.ExpiresAt {
		t.Errorf("expires_at = %s, token exp = %s", s.ExpiresAt, exp)
	}
	if ttl := claims.ExpiresAt.Sub(claims.IssuedAt.Time); ttl != 10*time.Minute {
		t.Errorf("token lifetime = %v, want 10m", ttl)
	}
	// The same signature on a claim set naming another room is refused.
	other := createSession(t, st, map[string]any{"platform_handle": "+15550000000", "media": "audio"})
	if r, err := lksdk.ConnectToRoomWithToken(s.RTCURL, retarget(t, s.ParticipantToken, other.ID), lksdk.NewRoomCallback()); err == nil {
		r.Disconnect()
		t.Error("a token edited to name another session's room joined it")
	}
	harness.Must(t, st.Do(t, http.MethodDelete, "/v1/sessions/"+other.ID, nil, nil), http.StatusOK, "DELETE other")
}

func retarget(t *testing.T, jwt, room string) string {
	parts := strings.Split(jwt, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	json.Unmarshal(payload, &claims)
	claims["video"].(map[string]any)["room"] = room
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAudioSessionRemoteHangup: an audio session's party publishes no video; its hanging
// up through the sim's HTTP API ends the session and disconnects the client.
func TestAudioSessionRemoteHangup(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	cl := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)
	harness.WaitFor(t, 20*time.Second, "client hears the party", func() bool { return !cl.FirstSound().IsZero() })
	for _, p := range cl.Room().GetRemoteParticipants() {
		for _, pub := range p.TrackPublications() {
			if pub.Kind() == lksdk.TrackKindVideo {
				t.Errorf("audio session: %s publishes video", p.Identity())
			}
		}
	}

	sc, ok := st.Sim.ByCallID(s.CallID)
	if !ok {
		t.Fatal("no sim call")
	}
	status, _, err := st.Request(http.MethodPost, "/sim/calls/"+sc.ID+"/hangup", nil, "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("sim hangup = %d, %v", status, err)
	}
	ended := waitStatus(t, st, s.ID, session.StatusEnded)
	if str(ended.EndReason) != call.ReasonRemoteHangup {
		t.Errorf("end_reason = %q, want remote_hangup", str(ended.EndReason))
	}
	select {
	case <-cl.Disconnected():
	case <-time.After(15 * time.Second):
		t.Fatal("client still connected after the remote party hung up")
	}
	c := getCall(t, st, s.CallID)
	if c.Status != call.StatusEnded || str(c.EndedBy) != call.EndedByRemote || c.Media != "audio" {
		t.Errorf("call record = %+v, want ended by remote", c)
	}
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
}

// TestClientLeaving: the customer's client leaving ends the session through LiveKit's
// participant_left webhook, verified by the receiver. The same token joining again
// replaces the connection under its identity (DUPLICATE_IDENTITY), which must not end it.
func TestClientLeaving(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	if !strings.HasPrefix(s.ParticipantIdentity, session.CustomerIdentityPrefix) || s.WatchOnly {
		t.Fatalf("created token identity %q watch_only %v, want customer-... publishing", s.ParticipantIdentity, s.WatchOnly)
	}
	cl := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)

	cl2 := joinClient(t, s.RTCURL, s.ParticipantToken)
	select {
	case <-cl.Disconnected():
	case <-time.After(15 * time.Second):
		t.Fatal("the first connection was not replaced")
	}
	if got := getSession(t, st, s.ID); got.Status != session.StatusActive {
		t.Fatalf("after a rejoin, status = %s, want active", got.Status)
	}
	// LiveKit reports a participant's leaving only once it was active (media connected).
	harness.WaitFor(t, 20*time.Second, "rejoined client active", func() bool {
		ps, _ := st.RTC.ListParticipants(context.Background(), s.ID)
		for _, p := range ps {
			if p.Identity == s.ParticipantIdentity && p.State == livekit.ParticipantInfo_ACTIVE {
				return true
			}
		}
		return false
	})

	cl2.Leave()
	ended := waitStatus(t, st, s.ID, session.StatusEnded)
	if str(ended.EndReason) != call.ReasonParticipantLeft {
		t.Errorf("end_reason = %q, want participant_left", str(ended.EndReason))
	}
	c := getCall(t, st, s.CallID)
	if str(c.EndedBy) != call.EndedByCustomer || str(c.EndReason) != call.ReasonParticipantLeft {
		t.Errorf("call record = %+v, want participant_left by customer", c)
	}
	harness.WaitFor(t, 10*time.Second, "sim party hung up", func() bool {
		sc, _ := st.Sim.ByCallID(s.CallID)
		return sc.Final()
	})
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
}

// TestEndsRaceOnce: DELETEs racing the remote hang-up and the client leaving still write
// one call.ended.
func TestEndsRaceOnce(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	cl := joinClient(t, s.RTCURL, s.ParticipantToken)
	waitStatus(t, st, s.ID, session.StatusActive)
	sc, _ := st.Sim.ByCallID(s.CallID)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i {
			case 0:
				st.Request(http.MethodPost, "/sim/calls/"+sc.ID+"/hangup", nil, "")
			case 1:
				cl.Leave()
			default:
				if status, body, err := st.Request(http.MethodDelete, "/v1/sessions/"+s.ID, nil, st.APIKey); err != nil || status != http.StatusOK {
					t.Errorf("DELETE = %d %s, %v", status, body, err)
				}
			}
		}()
	}
	wg.Wait()
	waitStatus(t, st, s.ID, session.StatusEnded)
	// Let the webhooks and notifications the race caused arrive before counting.
	harness.WaitFor(t, 10*time.Second, "room gone", func() bool {
		ps, _ := st.RTC.ListParticipants(context.Background(), s.ID)
		return len(ps) == 0
	})
	time.Sleep(500 * time.Millisecond)
	eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
}

// TestDialOutcomes: handles that are busy, do not answer or fail end the session failed
// with that reason, and write the call record.
func TestDialOutcomes(t *testing.T) {
	st := tenant(t)
	for handle, reason := range map[string]string{
		platformsim.HandleBusy: call.ReasonBusy, platformsim.HandleNoAnswer: call.ReasonNoAnswer, platformsim.HandleFailed: call.ReasonPlatformError,
	} {
		t.Run(handle, func(t *testing.T) {
			s := createSession(t, st, map[string]any{"platform_handle": handle, "media": "audio"})
			got := waitStatus(t, st, s.ID, session.StatusFailed)
			if str(got.EndReason) != reason {
				t.Errorf("end_reason = %q, want %q", str(got.EndReason), reason)
			}
			c := getCall(t, st, s.CallID)
			if c.Status != call.StatusFailed || c.AnsweredAt != nil || c.DurationMS == nil || *c.DurationMS != 0 {
				t.Errorf("call record = %+v, want failed, never answered", c)
			}
			eventtest.ExactlyOnce(t, st.Store, st.AccountID, callevent.TypeCallEnded, s.CallID)
			if ps, _ := st.RTC.ListParticipants(context.Background(), s.ID); len(ps) != 0 {
				t.Errorf("room still has %d participants", len(ps))
			}
		})
	}
}

// TestBadInput: the session routes answer bad requests with the documented errors and
// create nothing.
func TestBadInput(t *testing.T) {
	st := tenant(t)
	simCalls := len(st.Sim.List())
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		status int
		param  string
	}{
		{"no handle", http.MethodPost, "/v1/sessions", map[string]any{}, 400, "platform_handle"},
		{"bad media", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "media": "fax"}, 400, "media"},
		{"bad mode", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "mode": "robot"}, 400, "mode"},
		{"assistant without id", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "mode": "assistant"}, 400, "assistant_id"},
		{"assistant id with human", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "assistant_id": "asst_x"}, 400, "assistant_id"},
		{"unknown field", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "colour": "red"}, 400, "colour"},
		{"wrong type", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": 5}, 400, "platform_handle"},
		{"null handle", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": nil}, 400, "platform_handle"},
		{"unknown line", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "line_id": "line_01m813q4jpa7fqz94g6r8cb30d"}, 404, "line_id"},
		{"malformed line", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "line_id": "nope"}, 400, "line_id"},
		{"unknown assistant", http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1", "mode": "assistant", "assistant_id": "asst_01m813q4jpa7fqz94g6r8cb30d"}, 404, "assistant_id"},
		{"unknown session", http.MethodGet, "/v1/sessions/ses_01m813q4jpa7fqz94g6r8cb30d", nil, 404, "id"},
		{"delete unknown session", http.MethodDelete, "/v1/sessions/ses_nope", nil, 404, "id"},
		{"token unknown session", http.MethodPost, "/v1/sessions/ses_nope/tokens", nil, 404, "id"},
		{"bad limit", http.MethodGet, "/v1/sessions?limit=0", nil, 400, "limit"},
		{"bad calls filter", http.MethodGet, "/v1/calls?line_id=ses_x", nil, 400, "line_id"},
		{"unknown call", http.MethodGet, "/v1/calls/call_nope", nil, 404, "id"},
		{"wrong method", http.MethodPut, "/v1/sessions", nil, 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e struct {
				Error struct {
					Type, Code, Param, RequestID string
				} `json:"error"`
			}
			if got := st.Do(t, tt.method, tt.path, tt.body, &e); got != tt.status {
				t.Fatalf("status = %d (%+v), want %d", got, e, tt.status)
			}
			if e.Error.Param != tt.param || e.Error.Type != "invalid_request_error" || e.Error.Code == "" {
				t.Errorf("error = %+v, want invalid_request_error about %q", e.Error, tt.param)
			}
		})
	}
	if status, _, _ := st.Request(http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1"}, ""); status != 401 {
		t.Errorf("no key = %d, want 401", status)
	}
	var list struct{ Data []sessionObj }
	st.Do(t, http.MethodGet, "/v1/sessions", nil, &list)
	if len(list.Data) != 0 {
		t.Errorf("bad requests created %d sessions", len(list.Data))
	}
	if n := len(st.Sim.List()) - simCalls; n != 0 {
		t.Errorf("bad requests placed %d calls", n)
	}
}

// TestOtherAccount: another account's session and call answer 404.
func TestOtherAccount(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	defer st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil)
	other := harness.NewAccount(t, st)
	for _, p := range []string{"/v1/sessions/" + s.ID, "/v1/calls/" + s.CallID} {
		if status, _, _ := st.Request(http.MethodGet, p, nil, other); status != http.StatusNotFound {
			t.Errorf("GET %s as another account = %d, want 404", p, status)
		}
	}
	if status, _, _ := st.Request(http.MethodDelete, "/v1/sessions/"+s.ID, nil, other); status != http.StatusNotFound {
		t.Errorf("DELETE as another account = %d, want 404", status)
	}
	if status, _, _ := st.Request(http.MethodPost, "/v1/sessions", map[string]any{"platform_handle": "+1"}, other); status != http.StatusUnprocessableEntity {
		t.Errorf("POST from an account with no line = %d, want 422 no_line", status)
	}
}

// TestForgedReceivers: the internal receivers refuse unsigned and mis-signed requests.
func TestForgedReceivers(t *testing.T) {
	st := tenant(t)
	s := createSession(t, st, map[string]any{"platform_handle": "+15557654321", "media": "audio"})
	waitStatus(t, st, s.ID, session.StatusActive)
	body := `{"event":"room_finished","room":{"name":"` + s.ID + `"}}`
	forged, _ := auth.NewAccessToken(st.LiveKit.Config().APIKey, strings.Repeat("x", 40)).SetValidFor(time.Minute).ToJWT()
	for name, hdr := range map[string]map[string]string{
		"unsigned livekit": {},
		"forged livekit":   {"Authorization": forged},
	} {
		req, _ := http.NewRequest(http.MethodPost, st.URL+httpapi.LiveKitWebhookPath, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, resp.StatusCode)
		}
	}
	simBody := `{"id":"simevt_x","event":"hangup","platform_call_id":"x","call_id":"` + s.CallID + `","at":"2026-11-22T07:00:00Z"}`
	req, _ := http.NewRequest(http.MethodPost, st.URL+"/internal/platform/sim/events", strings.NewReader(simBody))
	req.Header.Set("Sim-Signature", "t=1,v1=00")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged sim notification: %d, want 401", resp.StatusCode)
	}
	if got := getSession(t, st, s.ID); got.Status != session.StatusActive {
		t.Errorf("after forged requests, status = %s, want active", got.Status)
	}
	st.Do(t, http.MethodDelete, "/v1/sessions/"+s.ID, nil, nil)
}
