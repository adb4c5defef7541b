// Package report sends a persona worker's reports to the control plane's one internal
// route (persona.ReportPath), signed with the report secret (PERSONA_REPORT_SECRET, not
// the LiveKit API secret) as persona.VerifyReport expects.
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// Sign returns the Authorization header value for body (persona.SignReport).
func Sign(body []byte, secret string) (string, error) {
	return persona.SignReport(body, secret, time.Now())
}

// Client posts reports. The zero value is not usable; fill every field but HTTP.
type Client struct {
	BaseURL string // control plane base URL (BRIDGELINE_API_URL)
	Secret  string // the report secret (PERSONA_REPORT_SECRET)
	HTTP    *http.Client
	Log     *slog.Logger
	// Attempts bounds tries per report (default 6, backoff from 200 ms doubling).
	Attempts int
}

// Send posts one report, retrying transport errors and 5xx/429 answers with backoff until
// it is accepted, the attempts run out, or ctx ends. The control plane treats reports as
// idempotent per (call_id, kind), so a retry after a lost answer is harmless.
//
// A 413 (the report is over the control plane's limit: a very long call's transcript)
// is not the end of it: the text of the oldest turns is dropped (TextTrimmed) until the
// report is at most half its size and at most persona.MaxReportBytes, and it is sent
// again at once, so the call's end, metrics and most recent turns still arrive.
func (c *Client) Send(ctx context.Context, r persona.Report) error {
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = 6
	}
	url := strings.TrimSuffix(c.BaseURL, "/") + persona.ReportPath
	backoff := 200 * time.Millisecond
	var last error
	wait := false
	for range attempts {
		if wait {
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return fmt.Errorf("report %s %s: %w (last: %v)", r.CallID, r.Kind, ctx.Err(), last)
			}
			backoff *= 2
		}
		_, retry, err := c.post(ctx, hc, url, body)
		if err == nil {
			return nil
		}
		last = err
		if errors.Is(err, errTooLarge) {
			smaller, trimmed, terr := trim(r, min(len(body)/2, persona.MaxReportBytes))
			if terr != nil {
				return fmt.Errorf("report %s %s: %w; %v", r.CallID, r.Kind, err, terr)
			}
			if c.Log != nil {
				c.Log.Warn("report too large; dropped the text of the oldest turns", "call_id", r.CallID, "kind", r.Kind,
					"bytes", len(body), "now_bytes", len(smaller), "turns_trimmed", trimmed)
			}
			body, wait = smaller, false
			continue
		}
		wait = true
		if !retry {
			break
		}
		if c.Log != nil {
			c.Log.Warn("report failed; retrying", "call_id", r.CallID, "kind", r.Kind, "err", err)
		}
	}
	return fmt.Errorf("report %s %s: %w", r.CallID, r.Kind, last)
}

func (c *Client) post(ctx context.Context, hc *http.Client, url string, body []byte) (status int, retry bool, err error) {
	authz, err := Sign(body, c.Secret)
	if err != nil {
		return 0, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authz)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, true, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode < 300:
		return resp.StatusCode, false, nil
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		return resp.StatusCode, false, fmt.Errorf("%w: HTTP 413 for %d bytes", errTooLarge, len(body))
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return resp.StatusCode, true, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	default:
		return resp.StatusCode, false, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
}

// CallTool asks the control plane to run one tool call (persona.ToolPath) and returns its
// answer: the result, or the tool's error for the model. It is sent once, never retried:
// the customer's tool may act. ctx bounds the wait (the tool's timeout and a margin); an
// error means the control plane gave no answer.
func (c *Client) CallTool(ctx context.Context, req persona.ToolRequest) (persona.ToolResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return persona.ToolResponse{}, fmt.Errorf("encode tool request: %w", err)
	}
	authz, err := persona.SignToolRequest(body, c.Secret, time.Now())
	if err != nil {
		return persona.ToolResponse{}, err
	}
	var out persona.ToolResponse
	if err := c.postJSON(ctx, persona.ToolPath, authz, body, 2*persona.MaxToolResponseBytes, &out, "tool request"); err != nil {
		return persona.ToolResponse{}, err
	}
	return out, nil
}

// postJSON posts body, signed with authz, to the control plane's path once and decodes
// its 200 answer, read up to limit bytes, into out; what names the request in errors.
// ctx bounds it: the client's own timeout is not added.
func (c *Client) postJSON(ctx context.Context, path, authz string, body []byte, limit int64, out any, what string) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", authz)
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient // ctx bounds it
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: HTTP %d: %s", what, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, limit)).Decode(out); err != nil {
		return fmt.Errorf("%s: answer: %w", what, err)
	}
	return nil
}

// errTooLarge is a 413 answer: the report must shrink before it is sent again.
var errTooLarge = errors.New("report too large")

// trim returns r encoded in at most max bytes, with the text of its oldest turns dropped
// (marked TextTrimmed), and how many turns it trimmed. It fails when even no text at all
// does not fit.
func trim(r persona.Report, max int) ([]byte, int, error) {
	turns := slices.Clone(r.Transcript)
	r.Transcript = turns
	body, err := json.Marshal(r)
	if err != nil {
		return nil, 0, fmt.Errorf("encode report: %w", err)
	}
	trimmed := 0
	for i := 0; len(body) > max && i < len(turns); {
		// Drop text turn by turn on an estimate of the size (encoding the whole report
		// after each turn would be quadratic in a long call), then encode to be sure.
		size := len(body)
		for ; size > max && i < len(turns); i++ {
			if tu := turns[i].Tool; tu != nil && (tu.Arguments != nil || tu.Result != nil) {
				// A tool call keeps its name, error and duration.
				size -= len(tu.Arguments) + len(tu.Result)
				kept := *tu
				kept.Arguments, kept.Result = nil, nil
				turns[i].Tool, turns[i].TextTrimmed = &kept, true
				trimmed++
				continue
			}
			if turns[i].Text == "" {
				continue
			}
			text, _ := json.Marshal(turns[i].Text)
			size -= len(text) - len(`""`) - len(`,"text_trimmed":true`)
			turns[i].Text, turns[i].TextTrimmed = "", true
			trimmed++
		}
		if body, err = json.Marshal(r); err != nil {
			return nil, 0, fmt.Errorf("encode report: %w", err)
		}
	}
	if len(body) > max {
		return nil, trimmed, fmt.Errorf("report is %d bytes without any turn's text, over %d", len(body), max)
	}
	return body, trimmed, nil
}

// Transfer asks the control plane to hand the call to one of its assistant's transfer
// destinations (persona.TransferPath) and returns once the destination answered, or the
// refusal (the call then goes on); pending when the control plane queued the transfer
// (202), whose outcome comes in the room (persona.TransferNotice). It is sent once: a
// transfer is not repeated on a lost answer, where the control plane may already have
// made it.
func (c *Client) Transfer(ctx context.Context, req persona.TransferRequest) (pending bool, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	hc = &http.Client{Transport: hc.Transport} // a transfer waits for a phone to answer: ctx bounds it
	status, _, err := c.post(ctx, hc, strings.TrimSuffix(c.BaseURL, "/")+persona.TransferPath, body)
	return err == nil && status == http.StatusAccepted, err
}

// AgentToken asks the control plane for a registration token (persona.AgentTokenPath):
// the worker's only way into livekit-server, since it holds no LiveKit API secret. Sent
// once; the caller (the agent's dial) retries with its own backoff. ctx bounds it, and
// at most 10 s.
func (c *Client) AgentToken(ctx context.Context) (persona.AgentToken, error) {
	authz, err := persona.SignAgentTokenRequest(c.Secret, time.Now())
	if err != nil {
		return persona.AgentToken{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out persona.AgentToken
	if err := c.postJSON(ctx, persona.AgentTokenPath, authz, persona.AgentTokenRequestBody(), 16<<10, &out, "agent token"); err != nil {
		return persona.AgentToken{}, err
	}
	if out.Token == "" || out.ExpiresAt.IsZero() {
		return persona.AgentToken{}, persona.ErrNoAgentToken
	}
	return out, nil
}

// AvatarSheet asks the control plane for the character sheet of one of the call's
// account's own avatars (persona.AvatarPath): its parts with GET URLs to read them by;
// and, with req.Logo, for the account's logo, whose bytes ride in the answer. ctx bounds
// it, and at most 10 s.
func (c *Client) AvatarSheet(ctx context.Context, req persona.AvatarRequest) (persona.AvatarSheet, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return persona.AvatarSheet{}, err
	}
	authz, err := persona.SignAvatarRequest(body, c.Secret, time.Now())
	if err != nil {
		return persona.AvatarSheet{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out persona.AvatarSheet
	if err := c.postJSON(ctx, persona.AvatarPath, authz, body, persona.MaxAvatarAnswerBytes, &out, "avatar sheet"); err != nil {
		return persona.AvatarSheet{}, err
	}
	return out, nil
}
