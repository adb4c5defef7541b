// Package toolcall runs a tool call of an assistant call for its persona worker: the
// worker names the call and the tool (persona.ToolRequest, on persona.ToolPath) and the
// control plane does the rest. It finds the tool in the version the call runs (the URL
// and the timeout come from the stored version, never from the worker), builds the
// request with the call's context, signs it per Standard Webhooks with the assistant's
// tool secret, posts it through the egress rules of webhook deliveries (every address
// checked after DNS resolution, no redirects, no proxy), bounds the answer, and hands
// back the result or the error the model is told.
//
// The worker holds no customer secret and no customer URL: a compromised worker can ask
// only for the tools of calls that exist, with the stored URLs.
package toolcall

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/events/webhook"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/session"
)

// UserAgent identifies Bridgeline's tool requests.
const UserAgent = "Bridgeline-Tools/1"

// IDPrefix starts the id of every tool request (its webhook-id).
const IDPrefix = "tcall"

// Records are what a tool call reads: the call, its session (metadata) and its version.
type Records interface {
	GetCall(ctx context.Context, id string) (call.Call, error)
	GetSession(ctx context.Context, id string) (session.Session, error)
	GetVersion(ctx context.Context, id string) (assistant.Version, error)
}

// Secrets opens an assistant's tool signing secrets: *assistant.Service.
type Secrets interface {
	ToolSigningSecrets(ctx context.Context, accountID, assistantID string) ([]string, error)
}

// Service runs tool calls.
type Service struct {
	Records Records
	Secrets Secrets
	// Client posts to the customer (NewClient); each request is bounded by its tool's
	// timeout_ms, not by the client.
	Client *http.Client
	Log    *slog.Logger
	Now    func() time.Time
}

// NewClient is the client tool requests go out with: webhook deliveries' (every
// connection checked against dest after DNS resolution, no redirects: a 3xx is an
// error, no proxy), without their 15 s bound.
func NewClient(dest egress.Policy) *http.Client {
	c := delivery.NewClient(dest)
	c.Timeout = 0
	return c
}

// Request is the JSON body Bridgeline posts to a tool's URL (openapi.yaml, ToolCallRequest).
type Request struct {
	ID        string    `json:"id"` // tcall_..., also the webhook-id header
	Object    string    `json:"object"`
	CreatedAt time.Time `json:"created_at"`
	// Tool is the tool's name; Arguments what the model gave, a JSON object.
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments"`
	CallID      string          `json:"call_id"`
	AssistantID string          `json:"assistant_id"`
	VersionID   string          `json:"version_id"`
	LineID      string          `json:"line_id"`
	SessionID   string          `json:"session_id"`
	// Metadata is the session's metadata ({} for none); Variables the values the call's
	// greeting and prompt were rendered with ({} for none).
	Metadata  map[string]string `json:"metadata"`
	Variables map[string]string `json:"variables"`
}

// MarshalJSON writes created_at as every timestamp of the API.
func (r Request) MarshalJSON() ([]byte, error) {
	type plain Request
	return json.Marshal(struct {
		plain
		CreatedAt string `json:"created_at"`
	}{plain(r), callevent.FormatTime(r.CreatedAt)})
}

// Call runs one tool call. The tool's failures (timeout, non-2xx, unreachable, blocked,
// oversized or non-JSON answer, unknown tool) are in the response's Error, for the model;
// the error is for the route: the call is unknown (resource_not_found) or a store failed.
func (s *Service) Call(ctx context.Context, req persona.ToolRequest) (persona.ToolResponse, error) {
	c, err := s.Records.GetCall(ctx, req.CallID)
	if errors.Is(err, apierr.ErrNotFound) {
		return persona.ToolResponse{}, apierr.NotFound("call", req.CallID)
	}
	if err != nil {
		return persona.ToolResponse{}, fmt.Errorf("get call %s: %w", req.CallID, err)
	}
	fail := func(code, msg string) (persona.ToolResponse, error) {
		return persona.ToolResponse{Error: &persona.ToolError{Code: code, Message: msg}}, nil
	}
	if c.Over() {
		return fail(persona.ToolErrCallNotLive, "the call has ended")
	}
	if c.VersionID == "" || c.AssistantID == "" {
		return fail(persona.ToolErrUnknown, "the call runs no assistant version")
	}
	v, err := s.Records.GetVersion(ctx, c.VersionID)
	if err != nil {
		return persona.ToolResponse{}, fmt.Errorf("get version %s: %w", c.VersionID, err)
	}
	tool, ok := v.Tool(req.Name)
	if !ok {
		return fail(persona.ToolErrUnknown, fmt.Sprintf("there is no tool named %q", req.Name))
	}
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || args[0] != '{' || !json.Valid(args) {
		return fail(persona.ToolErrBadArguments, "the arguments must be a JSON object")
	}
	meta := c.Metadata
	if c.SessionID != "" {
		ses, err := s.Records.GetSession(ctx, c.SessionID)
		if err != nil {
			return persona.ToolResponse{}, fmt.Errorf("get session %s: %w", c.SessionID, err)
		}
		meta = ses.Metadata
	}
	secrets, err := s.Secrets.ToolSigningSecrets(ctx, c.AccountID, c.AssistantID)
	if apierr.Is(err, apierr.CodeDraftIncomplete) {
		return fail(persona.ToolErrNotSigned, "the assistant has no tool secret to sign the request with")
	}
	if err != nil {
		return persona.ToolResponse{}, err
	}
	now, id := s.now(), ident.New(IDPrefix)
	body, err := json.Marshal(Request{
		ID: id, Object: "tool_call", CreatedAt: now, Tool: tool.Name, Arguments: json.RawMessage(args),
		CallID: c.ID, AssistantID: c.AssistantID, VersionID: c.VersionID, LineID: c.LineID, SessionID: c.SessionID,
		Metadata: orEmpty(meta), Variables: orEmpty(c.Variables),
	})
	if err != nil {
		return persona.ToolResponse{}, err
	}
	res := s.post(ctx, tool, id, now, body, secrets)
	s.log().Info("tool call", "call_id", c.ID, "tool", tool.Name, "request_id", id, "status_code", res.StatusCode,
		"duration_ms", res.DurationMS, "error", errCode(res.Error))
	return res, nil
}

// post makes the request and reads the answer, within the tool's timeout.
func (s *Service) post(ctx context.Context, tool assistant.Tool, id string, now time.Time, body []byte, secrets []string) persona.ToolResponse {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(tool.TimeoutMS)*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := persona.ToolResponse{}
	fail := func(code, msg string) persona.ToolResponse {
		res.Error = &persona.ToolError{Code: code, Message: msg}
		res.DurationMS = time.Since(start).Milliseconds()
		return res
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, tool.URL, bytes.NewReader(body))
	if err != nil {
		return fail(persona.ToolErrUnreachable, "the tool's URL cannot be requested")
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("User-Agent", UserAgent)
	if err := webhook.SetHeaders(hreq.Header, secrets, id, now, body); err != nil {
		return fail(persona.ToolErrNotSigned, "the request could not be signed")
	}
	resp, err := s.Client.Do(hreq)
	if err != nil {
		switch {
		case errors.Is(err, egress.ErrBlocked):
			res.Error = &persona.ToolError{Code: persona.ToolErrBlocked, Message: "the tool's address is not one Bridgeline may connect to"}
			return res // no connection was made: no duration
		case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fail(persona.ToolErrTimeout, fmt.Sprintf("no answer within %d ms", tool.TimeoutMS))
		}
		return fail(persona.ToolErrUnreachable, "the tool's server could not be reached")
	}
	defer resp.Body.Close()
	res.StatusCode = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, persona.MaxToolResponseBytes))
		return fail(persona.ToolErrStatus, fmt.Sprintf("the tool's server answered HTTP %d", resp.StatusCode))
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, persona.MaxToolResponseBytes+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return fail(persona.ToolErrTimeout, fmt.Sprintf("the answer did not arrive within %d ms", tool.TimeoutMS))
	case err != nil:
		return fail(persona.ToolErrUnreachable, "the answer broke off")
	case len(answer) > persona.MaxToolResponseBytes:
		return fail(persona.ToolErrTooLarge, fmt.Sprintf("the answer is over %d bytes", persona.MaxToolResponseBytes))
	}
	result, ok := Result(answer)
	if !ok {
		return fail(persona.ToolErrInvalid, "the answer is not JSON")
	}
	res.Result = result
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

// Result is the tool result an answer body holds: the value of {"result": ...} when the
// body is an object with that one key, else the whole JSON; an empty body is null. ok is
// false when the body is not JSON.
func Result(body []byte) (json.RawMessage, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return json.RawMessage("null"), true
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, body); err != nil {
		return nil, false
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(compact.Bytes(), &wrapped); err == nil && len(wrapped) == 1 {
		if r, ok := wrapped["result"]; ok {
			return r, true
		}
	}
	return compact.Bytes(), true
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func errCode(e *persona.ToolError) string {
	if e == nil {
		return ""
	}
	return e.Code
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC().Truncate(time.Millisecond)
	}
	return time.Now().UTC().Truncate(time.Millisecond)
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}
