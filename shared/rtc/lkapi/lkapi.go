// Package lkapi is the control plane's client of LiveKit as the local stack, the tests
// and tools use it: shared/rtc/lkhttp's client (rooms, agent dispatch, participant
// tokens, webhook receipt, in shared/rtc's types, with no LiveKit package), plus the
// protobuf-typed calls that return LiveKit's own types (ListParticipants), through
// livekit/protocol's Twirp client. The Lambdas use lkhttp directly, so that they do not
// link livekit/protocol and what it brings (psrpc, Redis, NATS, gRPC, CEL).
package lkapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/livekit/protocol/livekit"
	"github.com/twitchtv/twirp"

	"github.com/bridgeline/bridgeline/shared/lktoken"
	"github.com/bridgeline/bridgeline/shared/rtc/lkhttp"
)

// Config says where LiveKit is and how to sign for it.
type Config = lkhttp.Config

// Client controls LiveKit rooms and mints tokens. It is safe for concurrent use.
type Client struct {
	*lkhttp.Client
	rooms livekit.RoomService
}

// New builds a client; nothing is dialled until the first call.
func New(cfg Config) (*Client, error) {
	c, err := lkhttp.New(cfg)
	if err != nil {
		return nil, err
	}
	cfg = c.Config()
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{Client: c, rooms: livekit.NewRoomServiceProtobufClient(cfg.URL, hc)}, nil
}

// ListParticipants lists who is in the room; a room that does not exist has nobody.
func (c *Client) ListParticipants(ctx context.Context, room string) ([]*livekit.ParticipantInfo, error) {
	cfg := c.Config()
	jwt, err := lktoken.Sign(cfg.APIKey, cfg.APISecret, lktoken.Claims{Video: &lktoken.VideoGrant{RoomAdmin: true, Room: room}}, time.Now(), time.Minute)
	if err != nil {
		return nil, fmt.Errorf("rtc: sign server token: %w", err)
	}
	h := make(http.Header)
	h.Set("Authorization", "Bearer "+jwt)
	if ctx, err = twirp.WithHTTPRequestHeaders(ctx, h); err != nil {
		return nil, err
	}
	res, err := c.rooms.ListParticipants(ctx, &livekit.ListParticipantsRequest{Room: room})
	var te twirp.Error
	if errors.As(err, &te) && te.Code() == twirp.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rtc: list participants of %s: %w", room, err)
	}
	return res.Participants, nil
}
