// Package lkapi is the control plane's client of LiveKit: rooms (create, delete,
// participants, agent dispatch) through livekit/protocol's Twirp clients, participant
// tokens, and the receipt of LiveKit's signed webhooks, all in shared/rtc's types. It
// imports no SDK room client, no cgo and no WebRTC code (tokens come from shared/lktoken,
// not protocol/auth); only the functions that talk to LiveKit link it.
package lkapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/livekit/protocol/livekit"
	"github.com/twitchtv/twirp"
	"google.golang.org/protobuf/encoding/protojson"

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
	cfg      Config
	rooms    livekit.RoomService
	dispatch livekit.AgentDispatchService
	keys     lktoken.Keys
}

// New builds a client; nothing is dialled until the first call.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = rtc.DefaultTokenTTL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{
		cfg:      cfg,
		rooms:    livekit.NewRoomServiceProtobufClient(strings.TrimRight(cfg.URL, "/"), hc),
		dispatch: livekit.NewAgentDispatchServiceProtobufClient(strings.TrimRight(cfg.URL, "/"), hc),
		keys:     lktoken.KeyPair(cfg.APIKey, cfg.APISecret),
	}, nil
}

// PublicURL is the rtc_url handed to clients.
func (c *Client) PublicURL() string { return c.cfg.PublicURL }

// TokenTTL is the configured participant token lifetime.
func (c *Client) TokenTTL() time.Duration { return c.cfg.TokenTTL }

// KeyProvider knows the fleet's key; it verifies LiveKit webhooks and worker reports.
func (c *Client) KeyProvider() lktoken.Keys { return c.keys }

// CreateRoom creates the room. Creating a room that exists returns it unchanged.
func (c *Client) CreateRoom(ctx context.Context, spec rtc.RoomSpec) (rtc.Room, error) {
	if spec.Name == "" {
		return rtc.Room{}, errors.New("rtc: room name is required")
	}
	req := &livekit.CreateRoomRequest{
		Name:             spec.Name,
		EmptyTimeout:     uint32(spec.EmptyTimeout / time.Second),
		DepartureTimeout: uint32(spec.DepartureTimeout / time.Second),
		MaxParticipants:  uint32(spec.MaxParticipants),
		Metadata:         spec.Metadata,
	}
	if spec.Agent != nil {
		req.Agents = []*livekit.RoomAgentDispatch{{AgentName: spec.Agent.AgentName, Metadata: spec.Agent.Metadata}}
	}
	ctx, err := c.authorize(ctx, &lktoken.VideoGrant{RoomCreate: true})
	if err != nil {
		return rtc.Room{}, err
	}
	room, err := c.rooms.CreateRoom(ctx, req)
	if err != nil {
		return rtc.Room{}, fmt.Errorf("rtc: create room %s: %w", spec.Name, err)
	}
	return rtc.Room{SID: room.Sid, Name: room.Name, EmptyTimeout: time.Duration(room.EmptyTimeout) * time.Second,
		DepartureTimeout: time.Duration(room.DepartureTimeout) * time.Second, MaxParticipants: int(room.MaxParticipants)}, nil
}

// Dispatch asks LiveKit for an agent job in a room that already exists (a call handed to
// an assistant after it was answered otherwise).
func (c *Client) Dispatch(ctx context.Context, room string, d rtc.AgentDispatch) error {
	ctx, err := c.authorize(ctx, &lktoken.VideoGrant{RoomAdmin: true, Room: room})
	if err != nil {
		return err
	}
	_, err = c.dispatch.CreateDispatch(ctx, &livekit.CreateAgentDispatchRequest{Room: room, AgentName: d.AgentName, Metadata: d.Metadata})
	if err != nil {
		return fmt.Errorf("rtc: dispatch %s to %s: %w", d.AgentName, room, err)
	}
	return nil
}

// DeleteRoom closes the room and disconnects everyone in it. A room that does not exist
// (never created, already deleted or closed by its timeouts) is not an error.
func (c *Client) DeleteRoom(ctx context.Context, name string) error {
	ctx, err := c.authorize(ctx, &lktoken.VideoGrant{RoomCreate: true})
	if err != nil {
		return err
	}
	_, err = c.rooms.DeleteRoom(ctx, &livekit.DeleteRoomRequest{Room: name})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: delete room %s: %w", name, err)
	}
	return nil
}

// RemoveParticipant disconnects one participant. One that is not there is not an error.
func (c *Client) RemoveParticipant(ctx context.Context, room, identity string) error {
	ctx, err := c.authorize(ctx, &lktoken.VideoGrant{RoomAdmin: true, Room: room})
	if err != nil {
		return err
	}
	_, err = c.rooms.RemoveParticipant(ctx, &livekit.RoomParticipantIdentity{Room: room, Identity: identity})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("rtc: remove %s from %s: %w", identity, room, err)
	}
	return nil
}

// ListParticipants lists who is in the room; a room that does not exist has nobody.
func (c *Client) ListParticipants(ctx context.Context, room string) ([]*livekit.ParticipantInfo, error) {
	ctx, err := c.authorize(ctx, &lktoken.VideoGrant{RoomAdmin: true, Room: room})
	if err != nil {
		return nil, err
	}
	res, err := c.rooms.ListParticipants(ctx, &livekit.ListParticipantsRequest{Room: room})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rtc: list participants of %s: %w", room, err)
	}
	return res.Participants, nil
}

// authorize puts a short-lived server API token with grant on ctx's Twirp request headers.
func (c *Client) authorize(ctx context.Context, grant *lktoken.VideoGrant) (context.Context, error) {
	jwt, err := lktoken.Sign(c.cfg.APIKey, c.cfg.APISecret, lktoken.Claims{Video: grant}, time.Now(), time.Minute)
	if err != nil {
		return nil, fmt.Errorf("rtc: sign server token: %w", err)
	}
	h := make(http.Header)
	h.Set("Authorization", "Bearer "+jwt)
	return twirp.WithHTTPRequestHeaders(ctx, h)
}

func isNotFound(err error) bool {
	var te twirp.Error
	return errors.As(err, &te) && te.Code() == twirp.NotFound
}

// ParticipantToken mints a join token for one room only: roomJoin for g.Room,
// canPublish, canSubscribe and canPublishData, and no roomCreate, roomAdmin or roomList.
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
	yes := true
	claims := lktoken.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: g.Identity},
		Name:             g.Name, Kind: string(kind), Metadata: g.Metadata, Attributes: g.Attributes,
		Video: &lktoken.VideoGrant{RoomJoin: true, Room: g.Room, CanPublish: &yes, CanSubscribe: &yes, CanPublishData: &yes},
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

// ReceiveWebhook reads and verifies a LiveKit webhook: the Authorization header is a JWT
// signed with the fleet's key whose sha256 claim is the body's SHA-256 (compared in
// constant time by livekit/protocol's webhook package). The body is read up to
// rtc.MaxWebhookBytes.
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
	var ev livekit.WebhookEvent
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, &ev); err != nil {
		return rtc.WebhookEvent{}, fmt.Errorf("%w: %v", rtc.ErrWebhookMalformed, err)
	}
	return event(&ev), nil
}

// event is the control plane's view of a LiveKit webhook event.
func event(ev *livekit.WebhookEvent) rtc.WebhookEvent {
	out := rtc.WebhookEvent{Event: ev.GetEvent(), Room: ev.GetRoom().GetName()}
	if p := ev.GetParticipant(); p != nil {
		out.Participant = &rtc.Participant{Identity: p.GetIdentity(), Kind: kindOf(p.GetKind())}
		if r := p.GetDisconnectReason(); r != livekit.DisconnectReason_UNKNOWN_REASON {
			out.Participant.DisconnectReason = r.String()
		}
	}
	return out
}

// kindOf is LiveKit's participant kind as the token claim names it (standard, sip, agent).
func kindOf(k livekit.ParticipantInfo_Kind) rtc.Kind {
	return rtc.Kind(strings.ToLower(k.String()))
}
