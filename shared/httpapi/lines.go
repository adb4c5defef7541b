package httpapi

import (
	"net/http"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/metadata"
)

// LineJSON is the line object.
type LineJSON struct {
	ID                     string  `json:"id"`
	Object                 string  `json:"object"`
	Handle                 string  `json:"handle"`
	Platform               string  `json:"platform"`
	Name                   string  `json:"name"`
	InboundMode            string  `json:"inbound_mode"`
	AssistantID            *string `json:"assistant_id"`
	VersionID              *string `json:"version_id"`
	DecisionTimeoutSeconds int     `json:"decision_timeout_seconds"`
	OnDecisionTimeout      string  `json:"on_decision_timeout"`
	CreatedAt              Time    `json:"created_at"`
	UpdatedAt              Time    `json:"updated_at"`
	// Metadata is the customer's key-value pairs, {} for none.
	Metadata metadata.Metadata `json:"metadata"`
	// Variables are the line's default variables; {} for none.
	Variables map[string]string `json:"variables"`
	// SIPTrunkID is a SIP line's trunk; null for a sim line.
	SIPTrunkID *string `json:"sip_trunk_id"`
	// AllowedDestinationCountries is the line's own list of the countries it may call
	// (ISO 3166-1 alpha-2); null: the account's, else its own number's country.
	AllowedDestinationCountries []string `json:"allowed_destination_countries"`
	// Warnings are only in the answer to POST /v1/lines/{id}/assign: what the change did
	// that the caller may not expect.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Warning is a note on a request that succeeded: a stable code and a message for people.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WarningInboundModeNotAssistant: the line was assigned an assistant, but its
// inbound_mode does not let the assistant answer every call.
const WarningInboundModeNotAssistant = "inbound_mode_not_assistant"

// assignWarnings says when an assigned assistant will not answer the line's calls as
// they come in.
func assignWarnings(l line.Line) []Warning {
	switch l.InboundMode {
	case line.ModeCustomerDecides:
		then := "takes only the calls you answer with `assistant`"
		if l.OnDecisionTimeout == line.TimeoutAssistant {
			then += " and those nobody answers before answer_by"
		}
		return []Warning{{Code: WarningInboundModeNotAssistant, Message: "the line's inbound_mode is customer_decides: each call " +
			"goes to your call.incoming endpoint first, and the assistant " + then +
			". PATCH /v1/lines/" + l.ID + ` {"inbound_mode": "assistant"} to have it answer every call.`}}
	case line.ModeDisabled:
		return []Warning{{Code: WarningInboundModeNotAssistant, Message: "the line's inbound_mode is disabled: it declines every call, " +
			"and the assistant answers none. PATCH /v1/lines/" + l.ID + ` {"inbound_mode": "assistant"} to have it answer them.`}}
	}
	return nil
}

// PresentLine maps a line to its JSON object.
func PresentLine(l line.Line) LineJSON {
	return LineJSON{
		ID: l.ID, Object: "line", Handle: l.Handle, Platform: l.Platform, Name: l.Name, InboundMode: l.InboundMode,
		AssistantID: StringOrNull(l.AssistantID), VersionID: StringOrNull(l.VersionID), DecisionTimeoutSeconds: l.DecisionTimeoutSeconds,
		OnDecisionTimeout: l.OnDecisionTimeout, CreatedAt: Time(l.CreatedAt), UpdatedAt: Time(l.UpdatedAt),
		Metadata: l.Metadata.OrEmpty(), Variables: variablesOrEmpty(l.Variables), SIPTrunkID: StringOrNull(l.SIPTrunkID),
		AllowedDestinationCountries: l.AllowedDestinationCountries,
	}
}

// variablesOrEmpty presents a nil map as {}.
func variablesOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Lines serves /v1/lines.
type Lines struct {
	Service *line.Service
}

// Routes are the line routes, one Lambda function each.
func (h *Lines) Routes() []Route {
	return []Route{
		{Function: "lines-list", Method: http.MethodGet, Pattern: "/v1/lines", Keys: TestKeys(), Handler: h.listLines},
		{Function: "lines-get", Method: http.MethodGet, Pattern: "/v1/lines/{id}", Keys: TestKeys(), Handler: h.getLine},
		{Function: "lines-update", Method: http.MethodPatch, Pattern: "/v1/lines/{id}", Keys: LiveForRealResource(), Handler: h.updateLine},
		{Function: "lines-assign", Method: http.MethodPost, Pattern: "/v1/lines/{id}/assign", Keys: LiveForRealResource(), Handler: h.assignLine},
	}
}

func (h *Lines) listLines(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "line")
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID, q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewList(list, q, PresentLine), nil
}

func (h *Lines) getLine(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	l, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentLine(l), nil
}

func (h *Lines) assignLine(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		AssistantID string           `json:"assistant_id"`
		VersionID   Nullable[string] `json:"version_id"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	if body.AssistantID == "" {
		return 0, nil, apierr.Missing("assistant_id")
	}
	if err := versionParam(body.VersionID); err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForLine(r); err != nil {
		return 0, nil, err
	}
	l, err := h.Service.Update(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"),
		line.Update{AssistantID: &body.AssistantID, VersionID: body.VersionID.Ptr()})
	if err != nil {
		return 0, nil, err
	}
	out := PresentLine(l)
	out.Warnings = assignWarnings(l)
	return http.StatusOK, out, nil
}

// lineFields are the line's settings as PATCH /v1/lines/{id} takes them, and POST
// /v1/lines beside the SIP line's number and trunk.
type lineFields struct {
	Name                   Nullable[string] `json:"name"`
	InboundMode            Nullable[string] `json:"inbound_mode"`
	DecisionTimeoutSeconds Nullable[int]    `json:"decision_timeout_seconds"`
	OnDecisionTimeout      Nullable[string] `json:"on_decision_timeout"`
	AssistantID            Nullable[string] `json:"assistant_id"`
	VersionID              Nullable[string] `json:"version_id"`

	Metadata Nullable[metadataParam] `json:"metadata"`
	// Variables replaces the line's defaults; null or {} clears them.
	Variables Nullable[map[string]string] `json:"variables"`
	// AllowedDestinationCountries replaces the line's list; null goes back to the
	// default (the account's list, else the line's own country).
	AllowedDestinationCountries Nullable[[]string] `json:"allowed_destination_countries"`
}

// update is the line.Update the fields ask for.
func (body lineFields) update() (line.Update, error) {
	for _, err := range []error{
		body.Name.NotNull("name"), body.InboundMode.NotNull("inbound_mode"),
		body.DecisionTimeoutSeconds.NotNull("decision_timeout_seconds"),
		body.OnDecisionTimeout.NotNull("on_decision_timeout"),
	} {
		if err != nil {
			return line.Update{}, err
		}
	}
	u := line.Update{
		Name: body.Name.Ptr(), InboundMode: body.InboundMode.Ptr(), DecisionTimeoutSeconds: body.DecisionTimeoutSeconds.Ptr(),
		OnDecisionTimeout: body.OnDecisionTimeout.Ptr(), AssistantID: body.AssistantID.Ptr(),
		UnassignAssistant: body.AssistantID.Null, VersionID: body.VersionID.Ptr(), UnpinVersion: body.VersionID.Null,
		Metadata: metadataOnUpdate(body.Metadata),
	}
	if err := versionParam(body.VersionID); err != nil {
		return line.Update{}, err
	}
	if body.Variables.Set {
		u.Variables = &body.Variables.Value // null decodes as a nil map: cleared
	}
	u.AllowedDestinationCountries, u.DefaultDestinationCountries = body.AllowedDestinationCountries.Ptr(), body.AllowedDestinationCountries.Null
	return u, nil
}

func (h *Lines) updateLine(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body lineFields
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	u, err := body.update()
	if err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForLine(r); err != nil {
		return 0, nil, err
	}
	l, err := h.Service.Update(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), u)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentLine(l), nil
}

// liveKeyForLine asks the key rule about the path's line: a line on a real platform
// (SIP) is changed with a live key only, whatever the change (its settings, its
// assistant, the version it runs).
func (h *Lines) liveKeyForLine(r *http.Request) error {
	return requireLiveKey(r, func() (liveResource, error) {
		l, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
		if err != nil {
			return liveResource{}, err
		}
		return onPlatform("line "+l.ID, l.Platform), nil
	})
}

// versionParam checks a version_id's form: a ver_ id (null is for the caller to allow).
func versionParam(v Nullable[string]) error {
	if p := v.Ptr(); p != nil && !ident.Valid("ver", *p) {
		return invalidID("version_id", "ver")
	}
	return nil
}
