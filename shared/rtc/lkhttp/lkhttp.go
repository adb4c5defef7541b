// Package lkhttp is the control plane's client of LiveKit's server API with no LiveKit
// package: rooms (create, delete, remove a participant) and agent dispatch through
// LiveKit's Twirp services in their JSON encoding over net/http, participant tokens
// (shared/lktoken), and the receipt of LiveKit's signed webhooks, all in shared/rtc's
// types. livekit/protocol's generated package drags psrpc, Redis, NATS, gRPC and CEL into
// whatever imports it (some 17 MB of a Lambda), so the functions that talk to LiveKit use
// this client; shared/rtc/lkapi adds the protobuf-typed calls tests and tools use.
package lkhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/rtc"
)

// Config says where LiveKit is and how to sign for it.
type Config struct {
	// URL is LiveKit's server API base as the control plane reaches it (http(s)://...).
	URL string
	// PublicURL is the rtc_url clients connect to (wss://... in production).
	PublicURL string
	APIKey    string
	APISecret string
	// TokenTTL is the participant token lifetime; zero means rtc.DefaultTokenTTL.
	TokenTTL time.Duration
	// HTTPClient carries the Twirp calls; nil means a client with a 10 s timeout.
	HTTPClient *http.Client
}

// Validate reports the first missing or invalid setting.
func (c Config) Validate() error {
	for name, u := range map[string]string{"URL": c.URL, "PublicURL": c.PublicURL} {
		p, err := url.Parse(u)
		if err != nil || p.Host == "" {
			return fmt.Errorf("rtc: %s %q is not a URL", name, u)
		}
	}
	switch {
	case !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://"):
		return fmt.Errorf("rtc: URL %q must be http(s)", c.URL)
	case !strings.HasPrefix(c.PublicURL, "ws://") && !strings.HasPrefix(c.PublicURL, "wss://"):
		return fmt.Errorf("rtc: PublicURL %q must be ws(s)", c.PublicURL)
	case c.APIKey == "" || c.APISecret == "":
		return errors.New("rtc: API key and secret are required")
	case c.TokenTTL != 0 && (c.TokenTTL < rtc.MinTokenTTL || c.TokenTTL > rtc.MaxTokenTTL):
		return fmt.Errorf("rtc: token TTL %v is outside 1-60 minutes", c.TokenTTL)
	}
	return nil
}

// Client controls LiveKit rooms and mints tokens. It is safe for concurrent use.
type Client struct {
	cfg  Config
	hc   *http.Client
	keys lktoken.Keys
}

// New builds a client; nothing is dialled until the first call.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = rtc.DefaultTokenTTL
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{cfg: cfg, hc: hc, keys: lktoken.KeyPair(cfg.APIKey, cfg.APISecret)}, nil
}

// Config is the client's configuration, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// PublicURL is the rtc_url handed to clients.
func (c *Client) PublicURL() string { return c.cfg.PublicURL }

// TokenTTL is the configured participant token lifetime.
func (c *Client) TokenTTL() time.Duration { return c.cfg.TokenTTL }

// twirpError is a Twirp error answer ({"code": "not_found", "msg": ...}).
type twirpError struct {
	Status int
	Code   string `json:"code"`
	Msg    string `json:"msg"`
}

func (e *twirpError) Error() string {
	return fmt.Sprintf("twirp error %s: %s (HTTP %d)", e.Code, e.Msg, e.Status)
}

func isNotFound(err error) bool {
	var te *twirpError
	return errors.As(err, &te) && te.Code == "not_found"
}

// call makes one Twirp JSON call: POST <URL>/twirp/livekit.<service>/<method> with a
// server token carrying grant, and decodes the answer into out (nil skips).
func (c *Client) call(ctx context.Context, service, method string, grant *lktoken.VideoGrant, in, out any) error {
	return c.callAs(ctx, c.hc, service, method, lktoken.Claims{Video: grant}, in, out)
}

// callAs is call with any claims, over hc.
func (c *Client) callAs(ctx context.Context, hc *http.Client, service, method string, claims lktoken.Claims, in, out any) error {
	token, err := lktoken.Sign(c.cfg.APIKey, c.cfg.APISecret, claims, time.Now(), time.Minute)
	if err != nil {
		return fmt.Errorf("rtc: sign server token: %w", err)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+"/twirp/livekit."+service+"/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		te := &twirpError{Status: resp.StatusCode}
		if json.Unmarshal(data, te) != nil || te.Code == "" {
			te.Code, te.Msg = "internal", strings.TrimSpace(string(data))
		}
		return te
	}
	if out == nil {
		return nil
	}
	return decodeProtoJSON(data, out)
}

// decodeProtoJSON decodes a protobuf JSON object into out, whose json tags are the
// fields' proto names: protobuf's JSON may name a field either way (max_participants
// or maxParticipants), so both are folded to one before decoding.
func decodeProtoJSON(data []byte, out any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	folded := make(map[string]json.RawMessage, len(raw))
	for k, v := range raw {
		folded[fold(k)] = v
	}
	b, _ := json.Marshal(folded)
	return json.Unmarshal(b, out)
}

// fold is a field name without underscores, lower case: the proto name and the JSON name
// of a field fold alike.
func fold(name string) string { return strings.ToLower(strings.ReplaceAll(name, "_", "")) }

// room is livekit.Room's fields that the control plane reads (folded names).
type room struct {
	SID              string `json:"sid"`
	Name             string `json:"name"`
	EmptyTimeout     uint32 `json:"emptytimeout"`
	DepartureTimeout uint32 `json:"departuretimeout"`
	MaxParticipants  uint32 `json:"maxparticipants"`
}

// CreateRoom creates the room. Creating a room that exists returns it unchanged.
func (c *Client) CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error) {
	if spec.Name == "" {
		return rtc.Room{}, errors.New("rtc: room name is required")
	}
	type agent struct {
		AgentName string `json:"agent_name"`
		Metadata  string `json:"metadata,omitempty"`
	}
	req := struct {
		Name             string  `json:"name"`
		EmptyTimeout     uint32  `json:"empty_timeout,omitempty"`
		DepartureTimeout uint32  `json:"departure_timeout,omitempty"`
		MaxParticipants  uint32  `json:"max_participants,omitempty"`
		Metadata         string  `json:"metadata,omitempty"`
		Agents           []agent `json:"agents,omitempty"`
	}{Name: spec.Name, EmptyTimeout: uint32(spec.EmptyTimeout / time.Second),
		DepartureTimeout: uint32(spec.DepartureTimeout / time.Second), MaxParticipants: uint32(spec.MaxParticipants),
		Metadata: spec.Metadata}
	if spec.Agent != nil {
		req.Agents = []agent{{AgentName: spec.Agent.AgentName, Metadata: spec.Agent.Metadata}}
	}
	var r room
	if err := c.call(ctx, "RoomService", "CreateRoom", &lktoken.VideoGrant{RoomCreate: true}, req, &r); err != nil {
		return rtc.Room{}, fmt.Errorf("rtc: create room %s: %w", spec.Name, err)
	}
	return rtc.Room{SID: r.SID, Name: r.Name, EmptyTimeout: time.Duration(r.EmptyTimeout) * time.Second,
		DepartureTimeout: time.Duration(r.DepartureTimeout) * time.Second, MaxParticipants: int(r.MaxParticipants)}, nil
}

// Dispatch asks LiveKit for an agent job in a room that already exists (a call handed to
// an assistant after it was answered otherwise).
func (c *Client) Dispatch(ctx context.Context, room string, d rtc.AgentDispatch) error {
	req := map[string]string{"room": room, "agent_name": d.AgentName, "metadata": d.Metadata}
	if err := c.call(ctx, "AgentDispatchService", "CreateDispatch", &lktoken.VideoGrant{RoomAdmin: true, Room: room}, req, nil); err != nil {
		return fmt.Errorf("rtc: dispatch %s to %s: %w", d.AgentName, room, err)
	}
	return nil
}

// DeleteRoom closes the room and disconnects everyone in it. A room that does not exist
// (never created, already deleted or closed by its timeouts) is not an error.
func (c *Client) DeleteRoom(ctx context.Context, name string) error {
	err := c.call(ctx, "RoomService", "DeleteRoom", &lktoken.VideoGrant{RoomCreate: true}, map[string]string{"room": name}, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: delete room %s: %w", name, err)
	}
	return nil
}

// RemoveParticipant disconnects one participant. One that is not there is not an error.
func (c *Client) RemoveParticipant(ctx context.Context, room, identity string) error {
	err := c.call(ctx, "RoomService", "RemoveParticipant", &lktoken.VideoGrant{RoomAdmin: true, Room: room},
		map[string]string{"room": room, "identity": identity}, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: remove %s from %s: %w", identity, room, err)
	}
	return nil
}

// ParticipantToken mints a join token for one room only: roomJoin for g.Room,
// canSubscribe, canPublish and canPublishData (both false when g.SubscribeOnly), and no
// roomCreate, roomAdmin or roomList.
func (c *Client) ParticipantToken(g rtc.Grant) (rtc.Token, error) {
	if g.Room == "" || g.Identity == "" {
		return rtc.Token{}, errors.New("rtc: token needs a room and an identity")
	}
	ttl := g.TTL
	if ttl == 0 {
		ttl = c.cfg.TokenTTL
	}
	if ttl < rtc.MinTokenTTL || ttl > rtc.MaxTokenTTL {
		return rtc.Token{}, fmt.Errorf("rtc: token TTL %v is outside 1-60 minutes", ttl)
	}
	kind := g.Kind
	if kind == "" {
		kind = rtc.KindStandard
	}
	yes, publish := true, !g.SubscribeOnly
	data := publish && len(g.Sources) == 0
	claims := lktoken.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: g.Identity},
		Name:             g.Name, Kind: string(kind), Metadata: g.Metadata, Attributes: g.Attributes,
		// Both publish flags are written out: an absent canPublish means "allowed" to
		// livekit-server.
		Video: &lktoken.VideoGrant{RoomJoin: true, Room: g.Room, CanPublish: &publish, CanSubscribe: &yes, CanPublishData: &data},
	}
	if publish && len(g.Sources) > 0 {
		claims.Video.CanPublishSources = slices.Clone(g.Sources)
	}
	if g.UpdateOwnMetadata {
		claims.Video.CanUpdateOwnMetadata = &yes
	}
	// exp is whole seconds: expires_at is taken from the same truncated instant, so it is
	// the token's exp claim exactly.
	now := time.Now().Truncate(time.Second)
	signed, err := lktoken.Sign(c.cfg.APIKey, c.cfg.APISecret, claims, now, ttl)
	if err != nil {
		return rtc.Token{}, fmt.Errorf("rtc: sign participant token: %w", err)
	}
	return rtc.Token{JWT: signed, Identity: g.Identity, ExpiresAt: now.Add(ttl).UTC()}, nil
}

// Participants lists who is in the room, as webhooks describe them (identity and kind);
// a room that does not exist has nobody.
func (c *Client) Participants(ctx context.Context, room string) ([]rtc.Participant, error) {
	var res struct {
		Participants []json.RawMessage `json:"participants"`
	}
	err := c.call(ctx, "RoomService", "ListParticipants", &lktoken.VideoGrant{RoomAdmin: true, Room: room},
		map[string]string{"room": room}, &res)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rtc: list participants of %s: %w", room, err)
	}
	out := make([]rtc.Participant, 0, len(res.Participants))
	for _, raw := range res.Participants {
		p, err := decodeParticipant(raw)
		if err != nil {
			return nil, fmt.Errorf("rtc: list participants of %s: %w", room, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// SubscribeOnly takes a connected participant's right to publish tracks and data away,
// leaving it subscribed: what it published is unpublished. One that is not there is not
// an error (it may have left, or not joined yet).
func (c *Client) SubscribeOnly(ctx context.Context, room, identity string) error {
	req := map[string]any{"room": room, "identity": identity,
		"permission": map[string]bool{"can_subscribe": true, "can_publish": false, "can_publish_data": false}}
	err := c.call(ctx, "RoomService", "UpdateParticipant", &lktoken.VideoGrant{RoomAdmin: true, Room: room}, req, nil)
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: make %s subscribe-only in %s: %w", identity, room, err)
	}
	return nil
}

// SendData sends a reliable data packet on topic to everyone in the room, as the server
// (the packet names no participant). A room that does not exist is an error (LiveKit
// answers unavailable once no node claims it, after its RPC timeout of some 3 s).
func (c *Client) SendData(ctx context.Context, room, topic string, data []byte) error {
	req := map[string]any{"room": room, "data": data, "kind": "RELIABLE", "topic": topic}
	if err := c.call(ctx, "RoomService", "SendData", &lktoken.VideoGrant{RoomAdmin: true, Room: room}, req, nil); err != nil {
		return fmt.Errorf("rtc: send data on %s to %s: %w", topic, room, err)
	}
	return nil
}

// ReceiveWebhook reads and verifies a LiveKit webhook: the Authorization header is a JWT
// signed with the fleet's key whose sha256 claim is the body's SHA-256 (lktoken.VerifyBody
// compares it in constant time). The body is read up to rtc.MaxWebhookBytes.
func (c *Client) ReceiveWebhook(r *http.Request) (rtc.WebhookEvent, error) {
	defer r.Body.Close()
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, rtc.MaxWebhookBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return rtc.WebhookEvent{}, fmt.Errorf("%w: body over %d bytes", rtc.ErrWebhookMalformed, rtc.MaxWebhookBytes)
	case err != nil:
		return rtc.WebhookEvent{}, fmt.Errorf("%w: %v", rtc.ErrWebhookMalformed, err)
	}
	_, err = lktoken.VerifyBody(r.Header.Get("Authorization"), data, c.keys)
	switch {
	case errors.Is(err, lktoken.ErrMissing):
		return rtc.WebhookEvent{}, rtc.ErrWebhookUnsigned
	case err != nil:
		// Unparsable or unknown-key JWT, bad signature, expired, or checksum mismatch.
		return rtc.WebhookEvent{}, fmt.Errorf("%w: %v", rtc.ErrWebhookSignature, err)
	}
	ev, err := DecodeWebhook(data)
	if err != nil {
		return rtc.WebhookEvent{}, fmt.Errorf("%w: %v", rtc.ErrWebhookMalformed, err)
	}
	return ev, nil
}

// participantKinds are livekit.ParticipantInfo_Kind's numbers, for a body that encodes
// the enum as a number rather than its name.
var participantKinds = map[int]string{0: "STANDARD", 1: "INGRESS", 2: "EGRESS", 3: "SIP", 4: "AGENT", 7: "CONNECTOR"}

// DecodeWebhook reads a LiveKit webhook body (livekit.WebhookEvent in protobuf's JSON)
// into the control plane's view of it.
func DecodeWebhook(data []byte) (rtc.WebhookEvent, error) {
	var ev struct {
		Event       string          `json:"event"`
		Room        json.RawMessage `json:"room"`
		Participant json.RawMessage `json:"participant"`
	}
	if err := decodeProtoJSON(data, &ev); err != nil {
		return rtc.WebhookEvent{}, err
	}
	out := rtc.WebhookEvent{Event: ev.Event}
	if len(ev.Room) > 0 && string(ev.Room) != "null" {
		var r room
		if err := decodeProtoJSON(ev.Room, &r); err != nil {
			return rtc.WebhookEvent{}, fmt.Errorf("room: %w", err)
		}
		out.Room = r.Name
	}
	if len(ev.Participant) > 0 && string(ev.Participant) != "null" {
		p, err := decodeParticipant(ev.Participant)
		if err != nil {
			return rtc.WebhookEvent{}, fmt.Errorf("participant: %w", err)
		}
		out.Participant = &p
	}
	return out, nil
}

// decodeParticipant reads a livekit.ParticipantInfo in protobuf's JSON.
func decodeParticipant(data []byte) (rtc.Participant, error) {
	var p struct {
		Identity         string          `json:"identity"`
		Kind             json.RawMessage `json:"kind"`
		DisconnectReason json.RawMessage `json:"disconnectreason"`
		Permission       json.RawMessage `json:"permission"`
	}
	if err := decodeProtoJSON(data, &p); err != nil {
		return rtc.Participant{}, err
	}
	kind := enumName(p.Kind, participantKinds)
	if kind == "" {
		kind = "STANDARD"
	}
	out := rtc.Participant{Identity: p.Identity, Kind: rtc.Kind(strings.ToLower(kind))}
	if len(p.Permission) > 0 && string(p.Permission) != "null" {
		var perm struct {
			CanPublish     bool `json:"canpublish"`
			CanPublishData bool `json:"canpublishdata"`
		}
		if err := decodeProtoJSON(p.Permission, &perm); err != nil {
			return rtc.Participant{}, fmt.Errorf("permission: %w", err)
		}
		out.CanPublish = perm.CanPublish || perm.CanPublishData
	}
	if r := enumName(p.DisconnectReason, nil); r != "" && r != "UNKNOWN_REASON" {
		out.DisconnectReason = r
	}
	return out, nil
}

// enumName is a protobuf JSON enum value's name: the string itself, or the name of its
// number in names ("" when absent or unknown).
func enumName(raw json.RawMessage, names map[int]string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return names[n]
	}
	return ""
}
