// Package sipvideo is the media fleet's SIP video bridge: it answers SIP calls whose
// offer carries video (VP8) as well as audio, which LiveKit's SIP bridge (livekit-sip,
// audio only) cannot. It stands beside livekit-sip and makes its calls Bridgeline's the
// same way: it authenticates each INVITE against the inbound trunks and dispatch rules
// LiveKit holds (the ones the control plane keeps in sync), and joins the call's room
// through the SIP gateway (mediafleet/sipgateway) with a SIP participant's join token,
// exactly as livekit-sip does. The gateway asks the control plane, which routes the call
// by its line (assistant, customer_decides, ...) and answers with the session's room; so
// every rule of the audio path (trunk credentials and allowed addresses, live keys,
// decisions, the call record, hang-up reasons) holds unchanged.
//
// Media: the phone's G.711 audio is decoded and published as Opus, and the room's audio
// is mixed and sent back as G.711; VP8 video passes through both ways without
// transcoding, with keyframe requests (RTCP PLI/FIR) mapped to and from LiveKit. A call
// that offers no VP8 is bridged as audio only.
package sipvideo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emiago/sipgo"
	"github.com/emiago/sipgo/sip"
	"github.com/icholy/digest"

	"github.com/bridgeline/bridgeline/shared/redact"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// LiveKit is what the bridge reads of LiveKit's SIP configuration (shared/rtc/lkhttp).
type LiveKit interface {
	ListSIPInboundTrunks(ctx context.Context) ([]rtc.SIPInboundTrunk, error)
	ListSIPDispatchRules(ctx context.Context) ([]rtc.SIPDispatchRule, error)
}

// Config configures a Bridge.
type Config struct {
	// SIPAddr is the UDP host:port SIP is served on (port 0: a free one).
	SIPAddr string
	// MediaIP is the address the bridge's SDP gives for RTP (default: SIPAddr's host).
	MediaIP string
	// RTPPortStart and RTPPortEnd bound the UDP ports for RTP (0: any free ones).
	RTPPortStart, RTPPortEnd int
	// GatewayURL is the SIP gateway (ws://host:port) calls join rooms through.
	GatewayURL string
	// APIKey and APISecret are LiveKit's: join tokens are signed with them.
	APIKey, APISecret string
	LiveKit           LiveKit
	// TrunkCache is how long LiveKit's trunks and rules are kept between reads
	// (default 2 s).
	TrunkCache time.Duration
	// Limits bound each source address's INVITEs and failed digest answers.
	Limits SourceLimits
	Log    *slog.Logger
}

// Bridge is a running SIP video bridge.
type Bridge struct {
	cfg     Config
	log     *slog.Logger
	ua      *sipgo.UserAgent
	srv     *sipgo.Server
	client  *sipgo.Client
	dialogs *sipgo.DialogServerCache
	addr    *net.UDPAddr
	conn    net.PacketConn
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	ports   *portPool
	sources *sources

	mu     sync.Mutex
	calls  map[string]*call // by SIP Call-ID
	nonces map[string]time.Time
	cache  trunkCache
}

type trunkCache struct {
	at     time.Time
	trunks []rtc.SIPInboundTrunk
	rules  []rtc.SIPDispatchRule
}

// Start listens on cfg.SIPAddr and serves calls until Close.
func Start(cfg Config) (*Bridge, error) {
	if cfg.GatewayURL == "" || cfg.APIKey == "" || cfg.APISecret == "" || cfg.LiveKit == nil {
		return nil, errors.New("sipvideo: GatewayURL, LiveKit's key and secret and a LiveKit client are required")
	}
	if cfg.TrunkCache <= 0 {
		cfg.TrunkCache = 2 * time.Second
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	conn, err := net.ListenPacket("udp", cfg.SIPAddr)
	if err != nil {
		return nil, fmt.Errorf("sipvideo: listen: %w", err)
	}
	addr := conn.LocalAddr().(*net.UDPAddr)
	if cfg.MediaIP == "" {
		cfg.MediaIP = addr.IP.String()
		if addr.IP.IsUnspecified() {
			cfg.MediaIP = "127.0.0.1"
		}
	}
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("Bridgeline video bridge"), sipgo.WithUserAgentHostname(cfg.MediaIP))
	if err != nil {
		conn.Close()
		return nil, err
	}
	srv, err := sipgo.NewServer(ua)
	if err != nil {
		conn.Close()
		return nil, err
	}
	client, err := sipgo.NewClient(ua, sipgo.WithClientHostname(cfg.MediaIP))
	if err != nil {
		conn.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Bridge{cfg: cfg, log: log, ua: ua, srv: srv, client: client, addr: addr, conn: conn, ctx: ctx, cancel: cancel,
		ports: &portPool{start: cfg.RTPPortStart, end: cfg.RTPPortEnd, ip: addr.IP}, calls: map[string]*call{}, nonces: map[string]time.Time{},
		sources: newSources(cfg.Limits)}
	b.dialogs = sipgo.NewDialogServerCache(client, sip.ContactHeader{Address: sip.Uri{Host: cfg.MediaIP, Port: addr.Port}})
	srv.OnInvite(b.onInvite)
	srv.OnAck(func(req *sip.Request, tx sip.ServerTransaction) { b.dialogs.ReadAck(req, tx) })
	srv.OnBye(b.onBye)
	srv.OnOptions(func(req *sip.Request, tx sip.ServerTransaction) {
		tx.Respond(sip.NewResponseFromRequest(req, sip.StatusOK, "OK", nil))
	})
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := srv.ServeUDP(conn); err != nil && ctx.Err() == nil {
			log.Error("sip video bridge stopped serving", "err", err)
		}
	}()
	return b, nil
}

// SIPAddr is the host:port phones call.
func (b *Bridge) SIPAddr() string { return b.addr.String() }

// Close hangs up every call and stops serving.
func (b *Bridge) Close() {
	b.mu.Lock()
	calls := make([]*call, 0, len(b.calls))
	for _, c := range b.calls {
		calls = append(calls, c)
	}
	b.mu.Unlock()
	for _, c := range calls {
		c.end("bridge stopping") // a BYE to the phone
	}
	b.cancel()
	b.srv.Close()
	b.conn.Close()
	b.ua.Close()
	b.wg.Wait()
}

// Calls is how many calls the bridge carries now.
func (b *Bridge) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

const realm = "bridgeline"

// dropped is match's answer for an INVITE that gets no response.
const dropped = -1

// onInvite authenticates a new call, answers its ringing and bridges it in the
// background; a re-INVITE within a call is answered from that call.
func (b *Bridge) onInvite(req *sip.Request, tx sip.ServerTransaction) {
	callID := ""
	if h := req.CallID(); h != nil {
		callID = h.Value()
	}
	b.mu.Lock()
	existing := b.calls[callID]
	b.mu.Unlock()
	if existing != nil && req.To() != nil && req.To().Params.Has("tag") {
		existing.reinvite(req, tx)
		return
	}
	src := req.Source()
	if ok, logIt := b.sources.admit(src, time.Now()); !ok {
		if logIt {
			b.log.Warn("video calls dropped: the source is over its limits", "source", host(src))
		}
		return
	}
	respond := func(code int, reason string, hdrs ...sip.Header) {
		res := sip.NewResponseFromRequest(req, code, reason, nil)
		for _, h := range hdrs {
			res.AppendHeader(h)
		}
		tx.Respond(res)
	}
	from, to := userOf(req.From()), userOf(req.To())
	of, err := parseOffer(req.Body())
	if err != nil {
		b.log.Info("video call refused: offer", "from", redact.Number(from), "err", err)
		respond(sip.StatusNotAcceptableHere, "Not Acceptable Here")
		return
	}
	trunk, rule, status := b.match(req, from, to, src)
	switch status {
	case 0:
	case dropped:
		// No trunk takes calls from there for that number: no answer at all, as
		// livekit-sip does, so a scanner learns nothing.
		b.log.Info("video call dropped: no trunk matches", "from", redact.Number(from), "to", redact.Number(to), "source", src)
		return
	case sip.StatusUnauthorized:
		nonce := b.newNonce()
		if nonce == "" {
			b.log.Warn("video call dropped: too many digest challenges outstanding", "source", src)
			return
		}
		chal := digest.Challenge{Realm: realm, Nonce: nonce, Algorithm: "MD5"}
		respond(sip.StatusUnauthorized, "Unauthorized", sip.NewHeader("WWW-Authenticate", chal.String()))
		return
	default:
		if status == sip.StatusForbidden {
			b.sources.failed(src, time.Now())
		}
		b.log.Info("video call refused", "from", redact.Number(from), "to", redact.Number(to), "source", src, "status", status)
		respond(status, statusText(status))
		return
	}
	dlg, err := b.dialogs.ReadInvite(req, tx)
	if err != nil {
		respond(sip.StatusBadRequest, "Bad Request")
		return
	}
	c := &call{b: b, srv: dlg, sipCallID: callID, pcid: "SCV_" + randHex(6), from: from, to: to, trunk: trunk, rule: rule, offer: of,
		ended: make(chan struct{})}
	b.mu.Lock()
	b.calls[callID] = c
	b.mu.Unlock()
	b.log.Info("video call", "platform_call_id", c.pcid, "from", redact.Number(from), "to", redact.Number(to),
		"video", of.videoAddr != nil)
	dlg.Respond(sip.StatusTrying, "Trying", nil)
	dlg.Respond(sip.StatusRinging, "Ringing", nil)
	// The INVITE's transaction ends when this handler returns: it waits for the final
	// answer, and the call goes on in the background.
	c.settled = make(chan struct{})
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		c.run()
		b.mu.Lock()
		delete(b.calls, callID)
		b.mu.Unlock()
	}()
	<-c.settled
}

func (b *Bridge) onBye(req *sip.Request, tx sip.ServerTransaction) {
	if h := req.CallID(); h != nil {
		b.mu.Lock()
		c := b.calls[h.Value()]
		b.mu.Unlock()
		if c != nil && c.cli != nil {
			if err := c.cli.ReadBye(req, tx); err != nil {
				tx.Respond(sip.NewResponseFromRequest(req, sip.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist", nil))
			}
			return
		}
	}
	if err := b.dialogs.ReadBye(req, tx); err != nil {
		tx.Respond(sip.NewResponseFromRequest(req, sip.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist", nil))
	}
}

func userOf(h interface{ Value() string }) string {
	switch v := h.(type) {
	case *sip.FromHeader:
		if v != nil {
			return v.Address.User
		}
	case *sip.ToHeader:
		if v != nil {
			return v.Address.User
		}
	}
	return ""
}

// match finds the inbound trunk a call comes through, as LiveKit's SIP bridge does: the
// called number among its numbers, the source among its allowed addresses, the caller
// among its allowed numbers, and its digest credentials. It returns the trunk and its
// dispatch rule, or the SIP status to refuse with (401: ask for credentials).
func (b *Bridge) match(req *sip.Request, from, to, src string) (rtc.SIPInboundTrunk, rtc.SIPDispatchRule, int) {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	trunks, rules, err := b.trunks(ctx)
	if err != nil {
		b.log.Error("video call: trunks unavailable", "err", err)
		return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, sip.StatusServiceUnavailable
	}
	ip, _ := netip.ParseAddr(host(src))
	var cands []rtc.SIPInboundTrunk
	for _, t := range trunks {
		if len(t.Numbers) > 0 && !slices.Contains(t.Numbers, to) {
			continue
		}
		if len(t.AllowedNumbers) > 0 && !slices.Contains(t.AllowedNumbers, from) {
			continue
		}
		if len(t.AllowedAddresses) > 0 && !addressAllowed(ip, t.AllowedAddresses) {
			continue
		}
		cands = append(cands, t)
	}
	if len(cands) == 0 {
		return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, dropped
	}
	var hdr sip.Header
	if h := req.GetHeader("Authorization"); h != nil {
		hdr = h
	}
	needAuth := slices.ContainsFunc(cands, func(t rtc.SIPInboundTrunk) bool { return t.AuthUsername != "" })
	var trunk *rtc.SIPInboundTrunk
	switch {
	case !needAuth:
		trunk = &cands[0]
	case hdr == nil:
		return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, sip.StatusUnauthorized
	default:
		cred, err := digest.ParseCredentials(hdr.Value())
		if err != nil || !b.nonceValid(cred.Nonce) {
			return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, sip.StatusUnauthorized
		}
		for i, t := range cands {
			if t.AuthUsername == "" || t.AuthUsername != cred.Username {
				continue
			}
			want, err := digest.Digest(&digest.Challenge{Realm: cred.Realm, Nonce: cred.Nonce, Algorithm: cred.Algorithm, QOP: qopOf(cred)},
				digest.Options{Method: string(req.Method), URI: cred.URI, Username: t.AuthUsername, Password: t.AuthPassword, Cnonce: cred.Cnonce, Count: cred.Nc})
			if err == nil && want.Response == cred.Response {
				trunk = &cands[i]
				break
			}
		}
		if trunk == nil {
			return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, sip.StatusForbidden
		}
	}
	for _, r := range rules {
		if r.RoomPrefix != "" && (len(r.TrunkIDs) == 0 || slices.Contains(r.TrunkIDs, trunk.ID)) {
			return *trunk, r, 0
		}
	}
	return rtc.SIPInboundTrunk{}, rtc.SIPDispatchRule{}, sip.StatusNotFound
}

func qopOf(c *digest.Credentials) []string {
	if c.QOP == "" {
		return nil
	}
	return []string{c.QOP}
}

func addressAllowed(ip netip.Addr, allowed []string) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap()
	for _, a := range allowed {
		if p, err := netip.ParsePrefix(a); err == nil && p.Contains(ip) {
			return true
		}
		if x, err := netip.ParseAddr(a); err == nil && x.Unmap() == ip {
			return true
		}
	}
	return false
}

// trunks reads LiveKit's inbound trunks and dispatch rules, at most every TrunkCache.
func (b *Bridge) trunks(ctx context.Context) ([]rtc.SIPInboundTrunk, []rtc.SIPDispatchRule, error) {
	b.mu.Lock()
	c := b.cache
	b.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < b.cfg.TrunkCache {
		return c.trunks, c.rules, nil
	}
	trunks, err := b.cfg.LiveKit.ListSIPInboundTrunks(ctx)
	if err != nil {
		return nil, nil, err
	}
	rules, err := b.cfg.LiveKit.ListSIPDispatchRules(ctx)
	if err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	b.cache = trunkCache{at: time.Now(), trunks: trunks, rules: rules}
	b.mu.Unlock()
	return trunks, rules, nil
}

// nonceTTL is how long a digest challenge may be answered.
const nonceTTL = time.Minute

// maxNonces bounds the digest challenges outstanding at once (each source's INVITEs are
// bounded too, SourceLimits; this is for many sources at once).
const maxNonces = 50000

// newNonce is a new digest challenge's nonce, "" when maxNonces are outstanding.
func (b *Bridge) newNonce() string {
	n := randHex(16)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if len(b.nonces) >= maxNonces/2 {
		for k, at := range b.nonces {
			if now.Sub(at) > nonceTTL {
				delete(b.nonces, k)
			}
		}
	}
	if len(b.nonces) >= maxNonces {
		return ""
	}
	b.nonces[n] = now
	return n
}

func (b *Bridge) nonceValid(n string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	at, ok := b.nonces[n]
	return ok && time.Since(at) <= nonceTTL
}

func randHex(n int) string {
	buf := make([]byte, n)
	rand.Read(buf)
	return hex.EncodeToString(buf)
}

// roomFor names an inbound call's room as LiveKit's SIP bridge does for an individual
// dispatch rule: <prefix>_<caller>_<random>.
func roomFor(rule rtc.SIPDispatchRule, from string) string {
	return rule.RoomPrefix + "_" + strings.TrimPrefix(from, "+") + "_" + randHex(6)
}

func statusText(code int) string {
	switch code {
	case sip.StatusNotFound:
		return "Not Found"
	case sip.StatusForbidden:
		return "Forbidden"
	case sip.StatusServiceUnavailable:
		return "Service Unavailable"
	}
	return "Refused"
}
