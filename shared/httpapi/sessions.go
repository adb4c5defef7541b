package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/joinpage"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/session"
)

// Sessions serves /v1/sessions and /v1/calls.
type Sessions struct {
	Service *session.Service
	// JoinPageURL is the hosted join page's address (JOIN_PAGE_URL); empty derives it
	// from each request (joinpage.BaseFor).
	JoinPageURL string
}

// Routes are the session and call routes, one Lambda function each.
func (h *Sessions) Routes() []Route {
	return []Route{
		{Function: "sessions-create", Method: http.MethodPost, Pattern: "/v1/sessions", Keys: LiveForRealResource(), Handler: h.create,
			ReplayOmits: []string{"participant_token"}, ReplayRefill: h.freshToken},
		{Function: "sessions-list", Method: http.MethodGet, Pattern: "/v1/sessions", Keys: TestKeys(), Handler: h.list},
		{Function: "sessions-get", Method: http.MethodGet, Pattern: "/v1/sessions/{id}", Keys: TestKeys(), Handler: h.get},
		{Function: "sessions-update", Method: http.MethodPatch, Pattern: "/v1/sessions/{id}", Keys: LiveForRealResource(), Handler: h.update},
		{Function: "sessions-delete", Method: http.MethodDelete, Pattern: "/v1/sessions/{id}", Keys: LiveForRealResource(), Handler: h.delete},
		{Function: "sessions-tokens", Method: http.MethodPost, Pattern: "/v1/sessions/{id}/tokens", Keys: LiveForRealResource(), Handler: h.token,
			ReplayOmits: []string{"participant_token"}, ReplayRefill: h.freshToken},
		{Function: "calls-list", Method: http.MethodGet, Pattern: "/v1/calls", Keys: TestKeys(), Handler: h.listCalls},
		{Function: "calls-get", Method: http.MethodGet, Pattern: "/v1/calls/{id}", Keys: TestKeys(), Handler: h.getCall},
		{Function: "calls-update", Method: http.MethodPatch, Pattern: "/v1/calls/{id}", Keys: LiveForRealResource(), Handler: h.updateCall},
		{Function: "calls-transfer", Method: http.MethodPost, Pattern: "/v1/calls/{id}/transfer", Keys: LiveForRealResource(), Handler: h.transferCall},
	}
}

// SessionJSON is the session object. The participant token and its expiry are present
// only in the answer to POST /v1/sessions.
type SessionJSON struct {
	ID               string  `json:"id"`
	Object           string  `json:"object"`
	SessionID        string  `json:"session_id"`
	CallID           string  `json:"call_id"`
	Status           string  `json:"status"`
	Mode             string  `json:"mode"`
	Media            string  `json:"media"`
	PlatformHandle   string  `json:"platform_handle"`
	LineID           string  `json:"line_id"`
	AssistantID      *string `json:"assistant_id"`
	VersionID        *string `json:"version_id"`
	RTCURL           string  `json:"rtc_url"`
	ParticipantToken string  `json:"participant_token,omitempty"`
	// ParticipantIdentity and WatchOnly describe the token, beside it.
	ParticipantIdentity string `json:"participant_identity,omitempty"`
	WatchOnly           *bool  `json:"watch_only,omitempty"`
	ExpiresAt           *Time  `json:"expires_at,omitempty"`
	// JoinURL is a web call's hosted join page with the caller's token in its fragment:
	// only in the answer to POST /v1/sessions, and only for a web call.
	JoinURL    string  `json:"join_url,omitempty"`
	EndReason  *string `json:"end_reason"`
	CreatedAt  Time    `json:"created_at"`
	AnsweredAt *Time   `json:"answered_at"`
	EndedAt    *Time   `json:"ended_at"`
	// Metadata is the customer's key-value pairs, {} for none.
	Metadata metadata.Metadata `json:"metadata"`
}

// PresentSession maps a session to its object.
func PresentSession(s session.Session, rtcURL string) SessionJSON {
	return SessionJSON{
		ID: s.ID, Object: "session", SessionID: s.ID, CallID: s.CallID, Status: s.Status, Mode: s.Mode, Media: s.Media,
		PlatformHandle: s.PlatformHandle, LineID: s.LineID, AssistantID: StringOrNull(s.AssistantID),
		VersionID: StringOrNull(s.VersionID), RTCURL: rtcURL, EndReason: StringOrNull(s.EndReason),
		CreatedAt: Time(s.CreatedAt), AnsweredAt: TimePtr(s.AnsweredAt), EndedAt: TimePtr(s.EndedAt),
		Metadata: s.Metadata.OrEmpty(),
	}
}

// CallJSON is the call record object.
type CallJSON struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Direction string `json:"direction"`
	// Platform is the calling platform the call is on (sim, sip, web).
	Platform    string  `json:"platform"`
	LineID      *string `json:"line_id"`
	From        string  `json:"from"`
	To          string  `json:"to"`
	Media       string  `json:"media"`
	Status      string  `json:"status"`
	HandledBy   string  `json:"handled_by"`
	AssistantID *string `json:"assistant_id"`
	VersionID   *string `json:"version_id"`
	SessionID   *string `json:"session_id"`
	// CampaignID and RecipientID name the campaign and recipient a campaign's call
	// dialled; null for any other call.
	CampaignID     *string          `json:"campaign_id"`
	RecipientID    *string          `json:"recipient_id"`
	StartedAt      Time             `json:"started_at"`
	AnsweredAt     *Time            `json:"answered_at"`
	EndedAt        *Time            `json:"ended_at"`
	DurationMS     *int64           `json:"duration_ms"`
	EndReason      *string          `json:"end_reason"`
	EndedBy        *string          `json:"ended_by"`
	Decision       *string          `json:"decision"`
	DecisionSource *string          `json:"decision_source"`
	Transcript     []persona.Turn   `json:"transcript"`
	Metrics        *persona.Metrics `json:"metrics"`
	// AssistantReport says whether the transcript and metrics are complete (assistant
	// calls only).
	AssistantReport *string `json:"assistant_report"`
	// Usage is set once the call is over (null before).
	Usage *call.Usage `json:"usage"`
	// Metadata is the customer's key-value pairs, {} for none.
	Metadata metadata.Metadata `json:"metadata"`
	// Variables are the values the assistant's placeholders were rendered with
	// (assistant calls only; null otherwise).
	Variables map[string]string `json:"variables"`
	// Transfer is the call's latest hand-over to another party; null when it had none.
	Transfer *TransferJSON `json:"transfer"`
	// Recording is the recording's status (pending, available, failed, deleted); null
	// when the call is not recorded.
	Recording *string `json:"recording"`
	// Analysis is the post-call analysis of an assistant call whose version asks for
	// one; null otherwise.
	Analysis *CallAnalysisJSON `json:"analysis"`
	// AMD is the answering-machine detection's decision on an outbound assistant call
	// that asked for it; null otherwise, and until it is made.
	AMD *AMDJSON `json:"amd"`
	// RedactedAt is when the call's data was deleted (DELETE /v1/calls/{id} or the
	// account's retention); null while the record keeps it.
	RedactedAt *Time `json:"redacted_at"`
}

// CallAnalysisJSON is a call's analysis, every field present.
type CallAnalysisJSON struct {
	Status         string          `json:"status"`
	Summary        *string         `json:"summary"`
	StructuredData json.RawMessage `json:"structured_data"`
	Success        *bool           `json:"success"`
	Error          *string         `json:"error"`
}

func presentCallAnalysis(a *call.Analysis) *CallAnalysisJSON {
	if a == nil {
		return nil
	}
	data := a.StructuredData
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	return &CallAnalysisJSON{Status: a.Status, Summary: StringOrNull(a.Summary), StructuredData: data, Success: a.Success,
		Error: StringOrNull(a.Error)}
}

// TransferJSON is a call's transfer.
type TransferJSON struct {
	To          string  `json:"to"`
	Status      string  `json:"status"`
	RequestedAt Time    `json:"requested_at"`
	By          string  `json:"by"`
	Failure     *string `json:"failure"`
	// ReportedError is what the platform reported for a transfer that completed anyway.
	ReportedError *string `json:"reported_error"`
}

// PresentCall maps a call record to its object. Transcript is an array for assistant
// calls and null otherwise.
func PresentCall(c call.Call) CallJSON {
	transcript := c.Transcript
	var report *string
	var vars map[string]string
	if c.HandledBy == call.HandledByAssistant {
		vars = variablesOrEmpty(c.Variables)
		if transcript == nil {
			transcript = []persona.Turn{}
		}
		r := c.AssistantReport
		if r == "" {
			r = call.ReportPending
		}
		report = &r
	}
	return CallJSON{
		ID: c.ID, Object: "call", Direction: c.Direction, Platform: c.Platform, LineID: StringOrNull(c.LineID), From: c.From, To: c.To,
		Media: c.Media, Status: c.Status, HandledBy: c.HandledBy, AssistantID: StringOrNull(c.AssistantID),
		VersionID: StringOrNull(c.VersionID), SessionID: StringOrNull(c.SessionID), CampaignID: StringOrNull(c.CampaignID), RecipientID: StringOrNull(c.RecipientID), StartedAt: Time(c.StartedAt),
		AnsweredAt: TimePtr(c.AnsweredAt), EndedAt: TimePtr(c.EndedAt), DurationMS: c.DurationMS,
		EndReason: StringOrNull(c.EndReason), EndedBy: StringOrNull(c.EndedBy), Decision: StringOrNull(c.Decision),
		DecisionSource: StringOrNull(c.DecisionSource), Transcript: transcript, Metrics: c.Metrics,
		AssistantReport: report, Metadata: c.Metadata.OrEmpty(), Variables: vars, Usage: c.Usage,
		Transfer: presentTransfer(c.Transfer), Analysis: presentCallAnalysis(c.Analysis), Recording: StringOrNull(c.RecordingStatus()),
		RedactedAt: TimePtr(c.RedactedAt), AMD: presentAMD(c.AMD),
	}
}

func presentTransfer(t *call.Transfer) *TransferJSON {
	if t == nil {
		return nil
	}
	return &TransferJSON{To: t.To, Status: t.Status, RequestedAt: Time(t.RequestedAt), By: t.By, Failure: StringOrNull(t.Failure),
		ReportedError: StringOrNull(t.ReportedError)}
}

func (h *Sessions) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	var body struct {
		PlatformHandle Nullable[string] `json:"platform_handle"`
		Media          Nullable[string] `json:"media"`
		Mode           Nullable[string] `json:"mode"`
		AssistantID    Nullable[string] `json:"assistant_id"`
		LineID         Nullable[string] `json:"line_id"`

		Metadata Nullable[metadataParam] `json:"metadata"`
		// Variables (mode assistant): null counts as absent.
		Variables Nullable[map[string]string] `json:"variables"`
		// Recording (mode assistant) overrides the version's: off or audio.
		Recording Nullable[string] `json:"recording"`
		// AMD (mode assistant, outbound): answering-machine detection.
		AMD Nullable[amdParam] `json:"amd"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	for _, err := range []error{body.PlatformHandle.NotNull("platform_handle"), body.Media.NotNull("media"),
		body.Mode.NotNull("mode"), body.LineID.NotNull("line_id"), body.Metadata.NotNull("metadata"), body.Recording.NotNull("recording")} {
		if err != nil {
			return 0, nil, err
		}
	}
	if body.Recording.Set && body.Recording.Value == "" {
		return 0, nil, apierr.Invalid("recording", "recording must be off or audio")
	}
	req := session.CreateRequest{PlatformHandle: body.PlatformHandle.Value, Media: body.Media.Value, Mode: body.Mode.Value,
		AssistantID: body.AssistantID.Value, LineID: body.LineID.Value, Metadata: metadata.Metadata(body.Metadata.Value),
		Variables: body.Variables.Value, Recording: body.Recording.Value,
		KeyRule: func(kind platform.Kind, what string) error {
			return requireLiveKey(r, func() (liveResource, error) { return onKind(what, kind), nil })
		}}
	if req.LineID != "" && !ident.Valid("line", req.LineID) {
		return 0, nil, invalidID("line_id", "line")
	}
	if p := body.AMD.Ptr(); p != nil {
		a := p.settings()
		req.AMD = &a
	}
	created, err := h.Service.Create(r.Context(), AccountFrom(r.Context()), req)
	if errors.Is(err, session.ErrDialAttempted) {
		// The party may be ringing: a retry replays this answer rather than dial again.
		KeepIdempotent(r.Context())
	}
	if err != nil {
		return 0, nil, err
	}
	out := PresentSession(created.Session, created.RTCURL)
	out.ParticipantToken = created.Token.JWT
	out.ParticipantIdentity, out.WatchOnly = created.Token.Identity, &created.Token.WatchOnly
	exp := Time(created.Token.ExpiresAt)
	out.ExpiresAt = &exp
	if created.Session.WebCall() {
		out.JoinURL = joinpage.URL(joinpage.BaseFor(h.JoinPageURL, r), created.Token.JWT)
	}
	return http.StatusCreated, out, nil
}

func (h *Sessions) list(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := sessionListQuery(r)
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID, q)
	if err != nil {
		return 0, nil, err
	}
	url := h.Service.PublicURL()
	return http.StatusOK, NewList(list, q.Query, func(s session.Session) SessionJSON { return PresentSession(s, url) }), nil
}

func (h *Sessions) get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	s, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentSession(s, h.Service.PublicURL()), nil
}

// updateBody is the body of PATCH /v1/sessions/{id} and /v1/calls/{id}: metadata is
// all they change.
type updateBody struct {
	Metadata Nullable[metadataParam] `json:"metadata"`
}

func (h *Sessions) update(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := h.liveKeyForSession(r); err != nil {
		return 0, nil, err
	}
	return patchMetadata(r, h.Service.Get, h.Service.UpdateMetadata,
		func(s session.Session) any { return PresentSession(s, h.Service.PublicURL()) })
}

func (h *Sessions) updateCall(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := h.liveKeyForCall(r); err != nil {
		return 0, nil, err
	}
	return patchMetadata(r, h.Service.Calls().Get, h.Service.UpdateCallMetadata, func(c call.Call) any { return PresentCall(c) })
}

// transferCall hands a live call to another number or SIP URI: 200 with the call, ended
// with end_reason transferred, once the destination answered.
func (h *Sessions) transferCall(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	var body struct {
		To Nullable[string] `json:"to"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForCall(r); err != nil {
		return 0, nil, err
	}
	if body.To.Ptr() == nil || *body.To.Ptr() == "" {
		// Another account's call is not found, whatever the body says.
		if _, err := h.Service.Calls().Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id")); err != nil {
			return 0, nil, err
		}
		return 0, nil, apierr.Missing("to")
	}
	c, err := h.Service.Transfer(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), *body.To.Ptr(), session.TransferBy(false))
	if err != nil {
		return 0, nil, err
	}
	// Accepted: the destination rings; the outcome lands in the record's transfer.
	return http.StatusAccepted, PresentCall(c), nil
}

// liveKeyForCall asks the key rule about the path's call: a call on a real platform
// (SIP) is changed with a live key only (its metadata, a transfer).
func (h *Sessions) liveKeyForCall(r *http.Request) error {
	return requireLiveKey(r, func() (liveResource, error) {
		c, err := h.Service.Calls().Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
		if err != nil {
			return liveResource{}, err
		}
		return onPlatform("call "+c.ID, c.Platform), nil
	})
}

// liveKeyForSession asks the key rule about the path's session, by its call's platform
// (a web call's session is on the web platform whatever its line's): a session on a
// real platform is changed, ended or joined (a new participant token) with a live key
// only.
func (h *Sessions) liveKeyForSession(r *http.Request) error {
	return requireLiveKey(r, func() (liveResource, error) {
		acct := AccountFrom(r.Context()).ID
		s, err := h.Service.Get(r.Context(), acct, r.PathValue("id"))
		if err != nil {
			return liveResource{}, err
		}
		c, err := h.Service.Calls().Get(r.Context(), acct, s.CallID)
		if err != nil {
			return liveResource{}, fmt.Errorf("call %s of session %s: %w", s.CallID, s.ID, err)
		}
		return onPlatform("session "+s.ID+"'s call", c.Platform), nil
	})
}

// patchMetadata answers a PATCH whose one field is metadata: the record of the path's id
// after update applied the body's metadata, or as get reads it when the body has none.
func patchMetadata[T any](r *http.Request, get func(ctx context.Context, accountID, id string) (T, error),
	update func(ctx context.Context, accountID, id string, p metadata.Patch) (T, error), present func(T) any) (int, any, error) {
	var body updateBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	acct, id := AccountFrom(r.Context()).ID, r.PathValue("id")
	var v T
	var err error
	if p := metadataOnUpdate(body.Metadata); p == nil {
		v, err = get(r.Context(), acct, id)
	} else {
		v, err = update(r.Context(), acct, id, *p)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, present(v), nil
}

func (h *Sessions) delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	if err := DecodeEmpty(r); err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForSession(r); err != nil {
		return 0, nil, err
	}
	s, err := h.Service.Delete(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentSession(s, h.Service.PublicURL()), nil
}

// SessionTokenJSON is the answer of POST /v1/sessions/{id}/tokens: the session payload
// with what the token is.
type SessionTokenJSON struct {
	AcceptedSessionJSON
	ParticipantName string `json:"participant_name"`
	WatchOnly       bool   `json:"watch_only"`
}

func (h *Sessions) token(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	var body struct {
		Name      Nullable[string] `json:"name"`
		WatchOnly Nullable[bool]   `json:"watch_only"`
	}
	if err := Decode(r, &body, true); err != nil {
		return 0, nil, err
	}
	for _, err := range []error{body.Name.NotNull("name"), body.WatchOnly.NotNull("watch_only")} {
		if err != nil {
			return 0, nil, err
		}
	}
	if body.Name.Set && body.Name.Value == "" {
		return 0, nil, apierr.Invalid("name", "name must not be empty; leave it out for the default")
	}
	if err := h.liveKeyForSession(r); err != nil {
		return 0, nil, err
	}
	acct := AccountFrom(r.Context()).ID
	id := r.PathValue("id")
	tok, err := h.Service.Token(r.Context(), acct, id, session.TokenRequest{Name: body.Name.Value, WatchOnly: body.WatchOnly.Ptr()})
	if err != nil {
		return 0, nil, err
	}
	s, err := h.Service.Get(r.Context(), acct, id)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, SessionTokenJSON{AcceptedSessionJSON: AcceptedSessionJSON{SessionID: s.ID, CallID: s.CallID,
		RTCURL: h.Service.PublicURL(), ParticipantToken: tok.JWT, ParticipantIdentity: tok.Identity,
		ExpiresAt: Time(tok.ExpiresAt)}, ParticipantName: tok.Name, WatchOnly: tok.WatchOnly}, nil
}

// freshToken completes the idempotent replay of an answer that carried a participant
// token (a session's create, a token's mint): the idempotency record keeps no token, so
// the replay gets a new one for the same session, of the same kind (watch-only or not,
// the same display name), with its own identity and expiry (session.ReplayToken).
func (h *Sessions) freshToken(r *http.Request, body map[string]json.RawMessage) error {
	var first struct {
		SessionID       string  `json:"session_id"`
		WatchOnly       *bool   `json:"watch_only"`
		ParticipantName *string `json:"participant_name"`
	}
	for k, v := range map[string]any{"session_id": &first.SessionID, "watch_only": &first.WatchOnly, "participant_name": &first.ParticipantName} {
		if raw, ok := body[k]; ok {
			if err := json.Unmarshal(raw, v); err != nil {
				return fmt.Errorf("stored answer's %s: %w", k, err)
			}
		}
	}
	req := session.TokenRequest{WatchOnly: first.WatchOnly}
	if first.ParticipantName != nil {
		req.Name = *first.ParticipantName
	}
	tok, err := h.Service.ReplayToken(r.Context(), AccountFrom(r.Context()).ID, first.SessionID, req)
	if err != nil {
		return err
	}
	for k, v := range map[string]any{"participant_token": tok.JWT, "participant_identity": tok.Identity, "expires_at": Time(tok.ExpiresAt)} {
		if body[k], err = json.Marshal(v); err != nil {
			return err
		}
	}
	return nil
}

func (h *Sessions) listCalls(w http.ResponseWriter, r *http.Request) (int, any, error) {
	cq, err := callListQuery(r)
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.Calls().List(r.Context(), AccountFrom(r.Context()).ID, cq)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, cq.Query, PresentCall), nil
}

func (h *Sessions) getCall(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	c, err := h.Service.Calls().Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentCall(c), nil
}

// DecodeEmpty accepts no body or an empty JSON object, for routes that take no
// parameters; anything else is a 400 naming the parameter.
func DecodeEmpty(r *http.Request) error {
	var none struct{}
	return Decode(r, &none, true)
}

func invalidID(param, prefix string) error {
	return apierr.Invalid(param, param+" must be a "+prefix+"_ id")
}
