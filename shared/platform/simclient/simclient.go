// Package simclient is the control plane's adapter for a sim running as a platform
// gateway (cmd/platform-gateway): it implements platform.Platform by POSTing simhook's
// signed control requests to the gateway. It imports no media code, so a Lambda can
// use it; the gateway's notifications come back to the control plane's simhook.Path as
// they do from the in-process sim.
package simclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/simhook"
)

// Config configures a Client.
type Config struct {
	// URL is the gateway's base URL (http://host:port), without a trailing path.
	URL string
	// Secret signs requests; the gateway verifies with the same secret (SIM_SECRET).
	Secret string
	// HTTPClient sends requests (default: 10 s timeout).
	HTTPClient *http.Client
}

// Client is a platform.Platform over a sim gateway.
type Client struct {
	sim.Kind // the sim's name, handles and abilities
	cfg      Config
}

var _ platform.Platform = (*Client)(nil)

// New makes a client.
func New(cfg Config) (*Client, error) {
	if cfg.URL == "" || cfg.Secret == "" {
		return nil, errors.New("simclient: URL and Secret are required")
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{cfg: cfg}, nil
}

// Dial implements platform.Platform.
func (c *Client) Dial(ctx context.Context, req platform.DialRequest) (string, error) {
	var out simhook.DialResult
	err := c.post(ctx, simhook.DialPath, simhook.DialBody{CallID: req.CallID, From: req.From, To: req.To, Media: req.Media,
		Room: simhook.Room{URL: req.Room.URL, Token: req.Room.Token}}, &out)
	if err != nil {
		return "", err
	}
	if out.PlatformCallID == "" {
		return "", errors.New("simclient: dial: the gateway returned no platform_call_id")
	}
	return out.PlatformCallID, nil
}

// Answer implements platform.Platform.
func (c *Client) Answer(ctx context.Context, platformCallID, callID string, room platform.Room) error {
	return c.post(ctx, simhook.AnswerPath, simhook.AnswerBody{PlatformCallID: platformCallID, CallID: callID,
		Room: simhook.Room{URL: room.URL, Token: room.Token}}, nil)
}

// Reject implements platform.Platform.
func (c *Client) Reject(ctx context.Context, platformCallID, reason string) error {
	return c.RejectCall(ctx, platformCallID, "", reason)
}

// RejectCall implements platform.CallRejecter: the gateway's sim keeps the call id.
func (c *Client) RejectCall(ctx context.Context, platformCallID, callID, reason string) error {
	return c.post(ctx, simhook.RejectPath, simhook.RejectBody{PlatformCallID: platformCallID, CallID: callID, Reason: reason}, nil)
}

// Hangup implements platform.Platform.
func (c *Client) Hangup(ctx context.Context, platformCallID string) error {
	return c.post(ctx, simhook.HangupPath, simhook.HangupBody{PlatformCallID: platformCallID}, nil)
}

// post sends one signed control request and decodes a 200's body into out (when not
// nil). A 404 with simhook.CodeUnknownCall is platform.ErrUnknownCall.
func (c *Client) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(simhook.Header, simhook.Sign(c.cfg.Secret, simhook.ToPlatform, http.MethodPost, path, body, time.Now()))
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("simclient: %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("simclient: %s: read answer: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		if resp.StatusCode == http.StatusNotFound && e.Error.Code == simhook.CodeUnknownCall {
			return platform.ErrUnknownCall
		}
		return fmt.Errorf("simclient: %s: status %d: %s %s", path, resp.StatusCode, e.Error.Code, e.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("simclient: %s: answer: %w", path, err)
		}
	}
	return nil
}
