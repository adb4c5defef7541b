// Package sipgateway is the SIP platform's gateway: the pass-through between LiveKit's SIP
// bridge (livekit-sip, whose ws_url points here) and livekit-server. Every room join the
// bridge makes goes through it, and it makes the bridge's calls Bridgeline's:
//
//   - An inbound call's join asks for a room named by one of Bridgeline's dispatch rules
//     (sip.RoomPrefix...), which never exists (rooms are never created by a join). The
//     gateway verifies the join token (LiveKit's key, kind SIP, the call's sip.* attributes),
//     holds the join and notifies the control plane of the inbound call, signed as the
//     sim's notifications are, to sip.Path. The control plane routes the call by its line
//     and answers with the session's room and a token for it, or refuses it. The join is
//     then forwarded into that room with that token, or refused, which the bridge answers
//     with 486 Busy Here without ever having answered the call. The caller hears ringing
//     meanwhile, and until someone in the room publishes audio.
//   - Other joins (a dialled call's callee, a reconnection with a token LiveKit refreshed)
//     name rooms the control plane made, and pass straight through.
//   - On each call's signal connection it reads what the bridge tells livekit-server: the
//     sip.callStatus attribute turning active (a dialled callee answered) and the leave
//     with its reason (hung up, busy, no answer, failed), and notifies the control plane
//     (answered, hangup, busy, no_answer, failed), in order, retried.
//
// Locally it runs inside `bridgeline dev` on a loopback port of its own; on AWS beside
// livekit-sip on each SIP node (cmd/sip-gateway).
package sipgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/livekit/protocol/livekit"
	"google.golang.org/protobuf/proto"

	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// Defaults of Config.
const (
	// DefaultJoinWait is how long an inbound call's join may wait for the control plane:
	// the line's decision timeout (at most 30 s) and the routing, within the bridge's
	// WebSocket handshake timeout (45 s).
	DefaultJoinWait = 40 * time.Second
	// DefaultReconnectWait is how long a call whose signal connection dropped without a
	// leave may take to come back before it counts as ended.
	DefaultReconnectWait = 15 * time.Second
	// keepEnded is how long an ended call's state is kept (late reconnections and
	// validations of its token find it).
	keepEnded = 2 * time.Minute
	// keepIdle bounds the state of a call with no connection and no end seen.
	keepIdle = 6 * time.Hour
)

// Config configures a Gateway.
type Config struct {
	// LiveKitURL is livekit-server (http://, https://, ws:// or wss://host:port), where
	// joins are forwarded.
	LiveKitURL string
	// APIKey and APISecret are LiveKit's: the bridge's join tokens verify with them.
	APIKey    string
	APISecret string
	// NotifyURL is the control plane's SIP receiver: its base URL with sip.Path.
	NotifyURL string
	// Secret signs notifications (the control plane's SIP platform secret).
	Secret string

	JoinWait      time.Duration // default DefaultJoinWait
	ReconnectWait time.Duration // default DefaultReconnectWait
	// HTTPClient posts notifications (default: no overall timeout; each post is bounded).
	HTTPClient *http.Client
	Log        *slog.Logger
}

// Gateway is a running gateway: its Handler serves the bridge.
type Gateway struct {
	cfg      Config
	keys     lktoken.Keys
	httpURL  *url.URL
	wsURL    string
	proxy    *httputil.ReverseProxy
	upgrader websocket.Upgrader
	log      *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	calls map[string]*callState // by the bridge's call id (sip.callID)
	conns map[*websocket.Conn]struct{}
}

// New checks cfg and makes a gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.APIKey == "" || cfg.APISecret == "" || cfg.NotifyURL == "" || cfg.Secret == "" {
		return nil, errors.New("sipgateway: LiveKit key and secret, NotifyURL and Secret are required")
	}
	u, err := url.Parse(cfg.LiveKitURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("sipgateway: LiveKit URL %q: not a URL", cfg.LiveKitURL)
	}
	httpURL, wsURL := *u, *u
	switch u.Scheme {
	case "ws", "http":
		httpURL.Scheme, wsURL.Scheme = "http", "ws"
	case "wss", "https":
		httpURL.Scheme, wsURL.Scheme = "https", "wss"
	default:
		return nil, fmt.Errorf("sipgateway: LiveKit URL %q: want http(s) or ws(s)", cfg.LiveKitURL)
	}
	if cfg.JoinWait <= 0 {
		cfg.JoinWait = DefaultJoinWait
	}
	if cfg.ReconnectWait <= 0 {
		cfg.ReconnectWait = DefaultReconnectWait
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		cfg: cfg, keys: lktoken.KeyPair(cfg.APIKey, cfg.APISecret), httpURL: &httpURL,
		wsURL: strings.TrimRight(wsURL.String(), "/"), proxy: httputil.NewSingleHostReverseProxy(&httpURL),
		// The bridge is the only client, on the same host or network; it sends no Origin.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		log:      cfg.Log, ctx: ctx, cancel: cancel,
		calls: map[string]*callState{}, conns: map[*websocket.Conn]struct{}{},
	}
	g.wg.Add(1)
	go g.sweep()
	return g, nil
}

// Close drops every connection and waits for the notifications in flight.
func (g *Gateway) Close() {
	g.cancel()
	g.mu.Lock()
	for c := range g.conns {
		c.Close()
	}
	g.mu.Unlock()
	g.wg.Wait()
}

// Drain waits until the bridge's signal connections through the gateway have all
// closed (its calls ended, or the bridge stopped), or ctx ends.
func (g *Gateway) Drain(ctx context.Context) {
	for {
		g.mu.Lock()
		n := len(g.conns)
		g.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Handler serves the bridge: signal connections and their validation, and everything
// else passed to livekit-server as it is.
func (g *Gateway) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case isRTCPath(r.URL.Path) && websocket.IsWebSocketUpgrade(r):
			g.signal(w, r)
		case isValidatePath(r.URL.Path):
			g.validate(w, r)
		default:
			g.proxy.ServeHTTP(w, r)
		}
	})
}

func isRTCPath(p string) bool      { return p == "/rtc" || p == "/rtc/v1" }
func isValidatePath(p string) bool { return p == "/rtc/validate" || p == "/rtc/v1/validate" }

// joinToken is the token of a join: the Authorization header's, or the access_token
// query parameter's (older clients).
func joinToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		return strings.TrimSpace(strings.TrimPrefix(h, "Bearer "))
	}
	return r.URL.Query().Get("access_token")
}

// route is what to do with a join: forward it with token (watching call when it is
// one of the bridge's calls), or refuse it with status and reason.
type route struct {
	token  string
	call   *callState
	status int
	reason string
}

// routeJoin decides a join from its token. An inbound call's first join waits for the
// control plane; its later ones (reconnections) and validations reuse the answer.
func (g *Gateway) routeJoin(ctx context.Context, token string) route {
	claims, err := lktoken.Verify(token, g.keys)
	if err != nil || claims.Video == nil || !claims.Video.RoomJoin {
		return route{status: http.StatusUnauthorized, reason: "invalid join token"}
	}
	room := claims.Video.Room
	pcid := claims.Attributes[rtc.AttrSIPCallID]
	if !strings.HasPrefix(room, sip.RoomPrefix) {
		// A room the control plane made: a dialled call's callee, or a reconnection
		// with a token LiveKit refreshed. Watched when it is a SIP call.
		if claims.Kind != string(rtc.KindSIP) || pcid == "" {
			return route{token: token}
		}
		return route{token: token, call: g.outbound(pcid, claims)}
	}
	if claims.Kind != string(rtc.KindSIP) || pcid == "" || claims.Attributes[rtc.AttrSIPPhoneNumber] == "" ||
		claims.Attributes[rtc.AttrSIPTrunkNumber] == "" || claims.Attributes[rtc.AttrSIPTrunkID] == "" {
		return route{status: http.StatusForbidden, reason: "not a SIP call of a Bridgeline line"}
	}
	st := g.inbound(ctx, pcid, claims)
	if st == nil {
		return route{status: http.StatusServiceUnavailable, reason: "gateway stopping"}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.reject != "" {
		return route{status: http.StatusForbidden, reason: st.reject, call: st}
	}
	return route{token: st.token, call: st}
}

// signal forwards one signal connection: the join is routed, livekit-server dialled with
// the token the route says, and the bridge's connection upgraded and joined to it; then
// every message is passed on, and the bridge's own read on the way.
func (g *Gateway) signal(w http.ResponseWriter, r *http.Request) {
	rt := g.routeJoin(r.Context(), joinToken(r))
	if rt.status != 0 {
		g.log.Info("join refused", "status", rt.status, "reason", rt.reason)
		http.Error(w, rt.reason, rt.status)
		return
	}
	header := http.Header{"Authorization": {"Bearer " + rt.token}}
	if ua := r.Header.Get("User-Agent"); ua != "" {
		header.Set("User-Agent", ua)
	}
	q := r.URL.Query()
	q.Del("access_token")
	target := g.wsURL + r.URL.Path + "?" + q.Encode()
	dialer := websocket.Dialer{HandshakeTimeout: 15 * time.Second}
	up, resp, err := dialer.DialContext(r.Context(), target, header)
	if err != nil {
		status, body := http.StatusBadGateway, []byte("livekit unavailable")
		if resp != nil {
			status = resp.StatusCode
			body, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
		}
		g.log.Warn("join not forwarded", "status", status, "err", err)
		w.WriteHeader(status)
		w.Write(body)
		return
	}
	down, err := g.upgrader.Upgrade(w, r, nil)
	if err != nil {
		up.Close()
		return
	}
	if !g.track(up, down) {
		return
	}
	defer g.untrack(up, down)
	st := rt.call
	if st != nil {
		st.connected()
		g.log.Debug("signal connection", "platform_call_id", st.pcid, "call_id", st.callID, "path", r.URL.Path)
	}
	done := make(chan struct{}, 2)
	go func() { g.pump(down, up, st, true); done <- struct{}{} }()
	go func() { g.pump(up, down, st, false); done <- struct{}{} }()
	<-done
	up.Close()
	down.Close()
	<-done
	if st != nil {
		g.log.Debug("signal connection closed", "platform_call_id", st.pcid, "call_id", st.callID)
		g.disconnected(st)
	}
}

// pump passes messages from src to dst until either fails; fromBridge says the bridge is
// src (its requests are read), else livekit-server (its responses are).
func (g *Gateway) pump(src, dst *websocket.Conn, st *callState, fromBridge bool) {
	for {
		typ, msg, err := src.ReadMessage()
		if err != nil {
			if ce, ok := err.(*websocket.CloseError); ok {
				dst.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(ce.Code, ce.Text), time.Now().Add(time.Second))
			}
			return
		}
		if st != nil && typ == websocket.BinaryMessage {
			if fromBridge {
				g.bridgeSaid(st, msg)
			} else {
				g.serverSaid(st, msg)
			}
		}
		if err := dst.WriteMessage(typ, msg); err != nil {
			return
		}
	}
}

// bridgeSaid reads one of the bridge's signal requests: its call answered, or its leave.
func (g *Gateway) bridgeSaid(st *callState, msg []byte) {
	var req livekit.SignalRequest
	if proto.Unmarshal(msg, &req) != nil {
		return
	}
	switch m := req.Message.(type) {
	case *livekit.SignalRequest_UpdateMetadata:
		attrs := m.UpdateMetadata.GetAttributes()
		if attrs[rtc.AttrSIPCallStatus] == "active" {
			if media := attrs[sip.AttrMedia]; media != "" {
				// The video bridge says what the answer carries: a phone rung with
				// video may have answered audio only.
				st.mu.Lock()
				st.media = media
				st.mu.Unlock()
			}
			g.answered(st)
		}
	case *livekit.SignalRequest_Leave:
		g.log.Debug("the bridge leaves", "platform_call_id", st.pcid, "reason", m.Leave.GetReason(), "action", m.Leave.GetAction())
		if m.Leave.GetAction() == livekit.LeaveRequest_DISCONNECT {
			st.mu.Lock()
			st.left, st.leaveReason = true, m.Leave.GetReason()
			st.mu.Unlock()
		}
	}
}

// serverSaid reads one of livekit-server's signal responses: a leave it orders because
// the participant was removed or the room deleted ends the call on Bridgeline's side,
// which did it. (It also answers the bridge's own leave with a leave, which changes
// nothing.)
func (g *Gateway) serverSaid(st *callState, msg []byte) {
	var resp livekit.SignalResponse
	if proto.Unmarshal(msg, &resp) != nil {
		return
	}
	l, ok := resp.Message.(*livekit.SignalResponse_Leave)
	if !ok || l.Leave.GetAction() != livekit.LeaveRequest_DISCONNECT {
		return
	}
	switch l.Leave.GetReason() {
	case livekit.DisconnectReason_PARTICIPANT_REMOVED, livekit.DisconnectReason_ROOM_DELETED:
		st.mu.Lock()
		if !st.left {
			st.removed = true
		}
		st.mu.Unlock()
	}
}

// validate answers the bridge's check of a join that failed: a refused inbound call is
// refused again with its reason; other tokens are swapped as their join would be and
// asked of livekit-server. It never notifies.
func (g *Gateway) validate(w http.ResponseWriter, r *http.Request) {
	token := joinToken(r)
	claims, err := lktoken.Verify(token, g.keys)
	if err == nil && claims.Video != nil && strings.HasPrefix(claims.Video.Room, sip.RoomPrefix) {
		st := g.lookup(claims.Attributes[rtc.AttrSIPCallID])
		if st == nil {
			http.Error(w, "unknown call", http.StatusForbidden)
			return
		}
		st.mu.Lock()
		reject, swapped := st.reject, st.token
		st.mu.Unlock()
		if reject != "" || swapped == "" {
			http.Error(w, "refused: "+reject, http.StatusForbidden)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+swapped)
		q := r.URL.Query()
		q.Del("access_token")
		r.URL.RawQuery = q.Encode()
	}
	g.proxy.ServeHTTP(w, r)
}

func (g *Gateway) track(conns ...*websocket.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ctx.Err() != nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		g.conns[c] = struct{}{}
	}
	return true
}

func (g *Gateway) untrack(conns ...*websocket.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range conns {
		delete(g.conns, c)
	}
}

// post sends one signed notification and decodes the answer into out (nil skips); retry
// says whether a failure may pass on another attempt (transport errors and 5xx).
func (g *Gateway) post(ctx context.Context, n platform.Notification, out any) (retry bool, err error) {
	body, err := json.Marshal(n)
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.cfg.NotifyURL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(simhook.Header, simhook.Sign(g.cfg.Secret, simhook.ToControlPlane, http.MethodPost, sip.Path, body, time.Now()))
	resp, err := g.cfg.HTTPClient.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode >= 500, fmt.Errorf("control plane answered %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	if out == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return false, fmt.Errorf("control plane answer: %w", err)
	}
	return false, nil
}

// deliver posts n, retrying within ctx (a few attempts with backoff), and decodes the
// answer into out.
func (g *Gateway) deliver(ctx context.Context, n platform.Notification, out any) error {
	var err error
	for attempt := 0; attempt < 6; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt*attempt) * 100 * time.Millisecond):
			case <-ctx.Done():
				return errors.Join(err, ctx.Err())
			}
		}
		var retry bool
		if retry, err = g.post(ctx, n, out); err == nil || !retry {
			return err
		}
		g.log.Warn("notify control plane", "event", n.Event, "platform_call_id", n.PlatformCallID, "attempt", attempt+1, "err", err)
	}
	return err
}

func newNotification(event string, st *callState) platform.Notification {
	media := platform.MediaAudio
	if st.media == platform.MediaVideo {
		media = platform.MediaVideo
	}
	return platform.Notification{ID: ident.New("sipevt"), Event: event, PlatformCallID: st.pcid, CallID: st.callID,
		From: st.from, To: st.to, Media: media, At: time.Now().UTC(), Trunk: st.trunk}
}
