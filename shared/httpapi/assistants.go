package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/line"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// AssistantJSON is the assistant object.
type AssistantJSON struct {
	ID     string    `json:"id"`
	Object string    `json:"object"`
	Name   string    `json:"name"`
	Status string    `json:"status"`
	Draft  DraftJSON `json:"draft"`
	// Versions are the newest assistant.ObjectVersions, oldest first.
	Versions []VersionJSON `json:"versions"`
	// VersionCount is how many versions were published; HasMoreVersions says Versions
	// leaves older ones out (GET /v1/assistants/{id}/versions lists them all).
	VersionCount    int     `json:"version_count"`
	HasMoreVersions bool    `json:"has_more_versions"`
	ActiveVersionID *string `json:"active_version_id"`
	CreatedAt       Time    `json:"created_at"`
	UpdatedAt       Time    `json:"updated_at"`
	// Metadata is the customer's key-value pairs, {} for none.
	Metadata metadata.Metadata `json:"metadata"`
	// ToolSecret is in the responses that made it (create, duplicate, rotate_tool_secret)
	// and in no other.
	ToolSecret *string `json:"tool_secret,omitempty"`
}

// DraftJSON is the draft as the assistant object shows it: the stored draft with every
// call setting present, defaults filled in.
type DraftJSON struct {
	assistant.Draft
	// Language is always present: en for drafts written before it existed.
	Language string `json:"language"`
	CallSettingsJSON
	// Recording is always present: off for records written before it existed.
	Recording string `json:"recording"`
}

// CallSettingsJSON are a draft's or a version's call settings, each always present: the
// tools ([] for none), idle_timeout_seconds (its default for records written before it
// existed) and max_duration_seconds (null: the deployment's limit only). Being shallower
// than the stored fields, they replace them in the JSON.
type CallSettingsJSON struct {
	Tools              []assistant.Tool `json:"tools"`
	IdleTimeoutSeconds int              `json:"idle_timeout_seconds"`
	MaxDurationSeconds *int             `json:"max_duration_seconds"`
	// Analysis is null when the version asks for none.
	Analysis *AnalysisJSON `json:"analysis"`
	// NoiseSuppression: the caller's audio passes noise suppression (on by default).
	NoiseSuppression bool `json:"noise_suppression"`
	// Interruption is always present, defaults filled in.
	Interruption InterruptionJSON `json:"interruption"`
	// Vision is always present: off for records written before it existed.
	Vision string `json:"vision"`
}

// InterruptionJSON is a draft's or a version's interruption settings, every field
// present.
type InterruptionJSON struct {
	Mode             string   `json:"mode"`
	MinWords         int      `json:"min_words"`
	Acknowledgements []string `json:"acknowledgements"`
}

func presentInterruption(c assistant.CallSettings) InterruptionJSON {
	in := c.InterruptionOf()
	out := InterruptionJSON{Mode: in.Mode, MinWords: in.MinWords, Acknowledgements: in.Acknowledgements}
	if out.Acknowledgements == nil {
		out.Acknowledgements = []string{}
	}
	return out
}

// AnalysisJSON is a draft's or a version's post-call analysis, every field present.
type AnalysisJSON struct {
	Summary         bool            `json:"summary"`
	StructuredData  json.RawMessage `json:"structured_data"`
	SuccessCriteria string          `json:"success_criteria"`
}

func presentAnalysis(a *assistant.Analysis) *AnalysisJSON {
	if a == nil {
		return nil
	}
	out := AnalysisJSON{Summary: a.Summary, StructuredData: a.StructuredData, SuccessCriteria: a.SuccessCriteria}
	if len(out.StructuredData) == 0 {
		out.StructuredData = json.RawMessage("null")
	}
	return &out
}

// PresentCallSettings maps call settings to their JSON.
func PresentCallSettings(c assistant.CallSettings) CallSettingsJSON {
	tools := c.Tools
	if tools == nil {
		tools = []assistant.Tool{}
	}
	return CallSettingsJSON{Tools: tools, IdleTimeoutSeconds: int(c.IdleTimeout().Seconds()), MaxDurationSeconds: c.MaxDurationSeconds,
		Analysis: presentAnalysis(c.Analysis), Interruption: presentInterruption(c), NoiseSuppression: !c.NoiseSuppressionOff,
		Vision: persona.VisionOrOff(c.Vision)}
}

// VersionJSON is the assistant version object.
type VersionJSON struct {
	ID           string          `json:"id"`
	Object       string          `json:"object"`
	Number       int             `json:"number"`
	PublishedAt  Time            `json:"published_at"`
	Name         string          `json:"name"`
	SystemPrompt string          `json:"system_prompt"`
	Greeting     string          `json:"greeting"`
	AvatarID     string          `json:"avatar_id"`
	Framing      persona.Framing `json:"framing"`
	Voice        string          `json:"voice"`
	Model        string          `json:"model"`
	// Language is the BCP-47 tag the version hears and speaks (en for versions published
	// before it existed).
	Language string `json:"language"`
	// TransferDestinations are where the version's assistant may transfer a call.
	TransferDestinations []persona.TransferDestination `json:"transfer_destinations"`
	// Variables are the placeholder names the greeting and system prompt use.
	Variables []string `json:"variables"`
	CallSettingsJSON
	// Recording: off or audio.
	Recording string `json:"recording"`
}

// destinationsOrEmpty presents no destinations as [].
func destinationsOrEmpty(ds []persona.TransferDestination) []persona.TransferDestination {
	if ds == nil {
		return []persona.TransferDestination{}
	}
	return ds
}

// PresentAssistant maps an assistant to its JSON object.
func PresentAssistant(a assistant.Assistant) AssistantJSON {
	newest := a.NewestVersions(assistant.ObjectVersions)
	a.Draft.TransferDestinations = destinationsOrEmpty(a.Draft.TransferDestinations)
	out := AssistantJSON{
		ID: a.ID, Object: "assistant", Name: a.Name, Status: a.Status,
		Draft: DraftJSON{Draft: a.Draft, Language: assistant.LanguageOf(a.Draft.Language), CallSettingsJSON: PresentCallSettings(a.Draft.CallSettings),
			Recording: assistant.RecordingOrOff(a.Draft.Recording)},
		Versions: make([]VersionJSON, 0, len(newest)), VersionCount: len(a.Versions),
		HasMoreVersions: len(newest) < len(a.Versions), ActiveVersionID: StringOrNull(a.ActiveVersionID),
		CreatedAt: Time(a.CreatedAt), UpdatedAt: Time(a.UpdatedAt), Metadata: a.Metadata.OrEmpty(),
	}
	for _, v := range newest {
		out.Versions = append(out.Versions, PresentVersion(v))
	}
	return out
}

// PresentVersion maps a version to its JSON object.
func PresentVersion(v assistant.Version) VersionJSON {
	return VersionJSON{
		ID: v.ID, Object: "assistant_version", Number: v.Number, PublishedAt: Time(v.PublishedAt),
		Name: v.Name, SystemPrompt: v.SystemPrompt, Greeting: v.Greeting, AvatarID: v.AvatarID, Framing: v.Framing,
		Voice: v.Voice, Model: v.Model, Language: assistant.LanguageOf(v.Language), Variables: v.VariableNames(), TransferDestinations: destinationsOrEmpty(v.TransferDestinations),
		CallSettingsJSON: PresentCallSettings(v.CallSettings), Recording: assistant.RecordingOrOff(v.Recording),
	}
}

// assistantBody is the body of create and PATCH. Fields may not be null.
type assistantBody struct {
	Name         Nullable[string]      `json:"name"`
	SystemPrompt Nullable[string]      `json:"system_prompt"`
	Greeting     Nullable[string]      `json:"greeting"`
	AvatarID     Nullable[string]      `json:"avatar_id"`
	Framing      Nullable[framingBody] `json:"framing"`
	Voice        Nullable[string]      `json:"voice"`
	Model        Nullable[string]      `json:"model"`
	Language     Nullable[string]      `json:"language"`
	// TransferDestinations replaces the draft's; [] clears them.
	TransferDestinations Nullable[[]destinationBody] `json:"transfer_destinations"`

	Tools              Nullable[[]toolBody] `json:"tools"`
	IdleTimeoutSeconds Nullable[int]        `json:"idle_timeout_seconds"`
	// MaxDurationSeconds may be null: the deployment's limit only.
	MaxDurationSeconds Nullable[int] `json:"max_duration_seconds"`
	// Analysis may be null: no post-call analysis.
	Analysis Nullable[analysisBody] `json:"analysis"`
	// NoiseSuppression: true or false.
	NoiseSuppression Nullable[bool] `json:"noise_suppression"`
	// Interruption may be null: the default.
	Interruption Nullable[interruptionBody] `json:"interruption"`
	// Vision: off, camera, screen or camera_and_screen.
	Vision Nullable[string] `json:"vision"`

	// Recording: off or audio.
	Recording Nullable[string] `json:"recording"`

	Metadata Nullable[metadataParam] `json:"metadata"`
}

// destinationBody is one of transfer_destinations.
type destinationBody struct {
	To          string `json:"to"`
	Description string `json:"description"`
}

// toolBody is one tool of a draft's tools: the whole list is given each time.
type toolBody struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	URL         string          `json:"url"`
	TimeoutMS   int             `json:"timeout_ms"`
}

// analysisBody is a draft's analysis: the whole of it is given each time.
type analysisBody struct {
	Summary         bool            `json:"summary"`
	StructuredData  json.RawMessage `json:"structured_data"`
	SuccessCriteria string          `json:"success_criteria"`
}

// interruptionBody is a draft's interruption settings: the whole of them each time.
type interruptionBody struct {
	Mode             string   `json:"mode"`
	MinWords         int      `json:"min_words"`
	Acknowledgements []string `json:"acknowledgements"`
}

// framingBody lets a PATCH give only shot or only position.
type framingBody struct {
	Shot     *string `json:"shot"`
	Position *string `json:"position"`
}

func (f assistantBody) fields(current persona.Framing) (assistant.Fields, error) {
	for _, err := range []error{
		f.Name.NotNull("name"), f.SystemPrompt.NotNull("system_prompt"), f.Greeting.NotNull("greeting"),
		f.AvatarID.NotNull("avatar_id"), f.Framing.NotNull("framing"), f.Voice.NotNull("voice"), f.Model.NotNull("model"),
		f.Language.NotNull("language"),
		f.TransferDestinations.NotNull("transfer_destinations"),
		f.Tools.NotNull("tools"), f.IdleTimeoutSeconds.NotNull("idle_timeout_seconds"), f.Recording.NotNull("recording"),
		f.NoiseSuppression.NotNull("noise_suppression"), f.Vision.NotNull("vision"),
	} {
		if err != nil {
			return assistant.Fields{}, err
		}
	}
	out := assistant.Fields{Name: f.Name.Ptr(), SystemPrompt: f.SystemPrompt.Ptr(), Greeting: f.Greeting.Ptr(), AvatarID: f.AvatarID.Ptr(),
		Voice: f.Voice.Ptr(), Model: f.Model.Ptr(), Language: f.Language.Ptr(), Recording: f.Recording.Ptr()}
	if ds := f.TransferDestinations.Ptr(); ds != nil {
		dests := make([]persona.TransferDestination, len(*ds))
		for i, d := range *ds {
			dests[i] = persona.TransferDestination{To: d.To, Description: d.Description}
		}
		out.TransferDestinations = &dests
	}
	if fr := f.Framing.Ptr(); fr != nil {
		merged := current
		if fr.Shot != nil {
			merged.Shot = *fr.Shot
		}
		if fr.Position != nil {
			merged.Position = *fr.Position
		}
		out.Framing = &merged
	}
	if f.Tools.Set || f.IdleTimeoutSeconds.Set || f.MaxDurationSeconds.Set || f.Analysis.Set || f.Interruption.Set || f.NoiseSuppression.Set ||
		f.Vision.Set {
		c := &assistant.CallFields{IdleTimeoutSeconds: f.IdleTimeoutSeconds.Ptr(), MaxDurationSeconds: f.MaxDurationSeconds.Ptr(),
			ClearMaxDuration: f.MaxDurationSeconds.Null, ClearAnalysis: f.Analysis.Null, ClearInterruption: f.Interruption.Null,
			NoiseSuppression: f.NoiseSuppression.Ptr(), Vision: f.Vision.Ptr()}
		if in := f.Interruption.Ptr(); in != nil {
			c.Interruption = &persona.Interruption{Mode: in.Mode, MinWords: in.MinWords, Acknowledgements: in.Acknowledgements}
		}
		if a := f.Analysis.Ptr(); a != nil {
			c.Analysis = &assistant.Analysis{Summary: a.Summary, StructuredData: a.StructuredData, SuccessCriteria: a.SuccessCriteria}
		}
		if f.Tools.Set {
			tools := make([]assistant.Tool, len(f.Tools.Value))
			for i, t := range f.Tools.Value {
				tools[i] = assistant.Tool(t)
			}
			c.Tools = &tools
		}
		out.Calls = c
	}
	return out, nil
}

// Assistants serves /v1/assistants and the catalogues an assistant picks from
// (/v1/avatars, /v1/voices, /v1/models).
type Assistants struct {
	Service *assistant.Service
	// Lines lists the account's lines, for the key rule of publish and activate (which
	// change what a line following the active version runs). Nil: Service.Store, when
	// it lists lines too (both stores do); else a test key may publish or activate only
	// an assistant no line is assigned.
	Lines LineLister
}

// LineLister lists an account's lines, newest first (line.Store).
type LineLister interface {
	ListLines(ctx context.Context, accountID string, q listing.Query) ([]line.Line, error)
}

// Routes are the assistant, avatar, voice and model routes, one Lambda function each.
func (h *Assistants) Routes() []Route {
	return []Route{
		{Function: "assistants-list", Method: http.MethodGet, Pattern: "/v1/assistants", Keys: TestKeys(), Handler: h.listAssistants},
		{Function: "assistants-create", Method: http.MethodPost, Pattern: "/v1/assistants", Keys: TestKeys(), ReplayOmits: []string{"tool_secret"}, Handler: h.createAssistant},
		{Function: "assistants-get", Method: http.MethodGet, Pattern: "/v1/assistants/{id}", Keys: TestKeys(), Handler: h.getAssistant},
		{Function: "assistants-versions-list", Method: http.MethodGet, Pattern: "/v1/assistants/{id}/versions", Keys: TestKeys(), Handler: h.listAssistantVersions},
		{Function: "assistants-update", Method: http.MethodPatch, Pattern: "/v1/assistants/{id}", Keys: TestKeys(), Handler: h.updateAssistant},
		{Function: "assistants-publish", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/publish", Keys: LiveForRealResource(), Handler: h.publishAssistant},
		{Function: "assistants-activate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/activate", Keys: LiveForRealResource(), Handler: h.activateAssistant},
		{Function: "assistants-draft-restore", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/draft/restore", Keys: TestKeys(), Handler: h.restoreAssistantDraft},
		{Function: "assistants-duplicate", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/duplicate", Keys: TestKeys(), ReplayOmits: []string{"tool_secret"}, Handler: h.duplicateAssistant},
		{Function: "assistants-archive", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/archive", Keys: TestKeys(), Handler: h.archiveAssistant},
		{Function: "assistants-rotate-tool-secret", Method: http.MethodPost, Pattern: "/v1/assistants/{id}/rotate_tool_secret", Keys: TestKeys(), ReplayOmits: []string{"tool_secret"}, Handler: h.rotateToolSecret},
		{Function: "voices-list", Method: http.MethodGet, Pattern: "/v1/voices", Keys: TestKeys(), Handler: h.listVoices},
		{Function: "models-list", Method: http.MethodGet, Pattern: "/v1/models", Keys: TestKeys(), Handler: h.listModels},
	}
}

func (h *Assistants) createAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body assistantBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	f, err := body.fields(persona.DefaultFraming)
	if err != nil {
		return 0, nil, err
	}
	if f.Metadata, err = metadataOnCreate(body.Metadata); err != nil {
		return 0, nil, err
	}
	caller := AccountFrom(r.Context())
	f.LiveKey = caller.Live
	as, err := h.Service.Create(r.Context(), caller.ID, f)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, withToolSecret(as), nil
}

// withToolSecret is the assistant object of a response that made its tool secret, which
// as holds in clear: the one time the customer sees it.
func withToolSecret(as assistant.Assistant) AssistantJSON {
	out := PresentAssistant(as)
	secret := as.ToolSecret.Secret
	out.ToolSecret = &secret
	return out
}

func (h *Assistants) rotateToolSecret(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Decode(r, &struct{}{}, true); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.RotateToolSecret(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, withToolSecret(as), nil
}

func (h *Assistants) listAssistants(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "asst", "status")
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.List(r.Context(), AccountFrom(r.Context()).ID,
		assistant.ListQuery{Query: q, Status: r.URL.Query().Get("status")})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewBoundedList(list, q, PresentAssistant), nil
}

func (h *Assistants) listAssistantVersions(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := ListQuery(r, "ver")
	if err != nil {
		return 0, nil, err
	}
	list, err := h.Service.ListVersions(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), q)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, NewBoundedList(list, q, PresentVersion), nil
}

func (h *Assistants) getAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.Get(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentAssistant(as), nil
}

func (h *Assistants) updateAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body assistantBody
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	acct, id := AccountFrom(r.Context()).ID, r.PathValue("id")
	current := persona.DefaultFraming
	if body.Framing.Set {
		// A partial framing merges into the current one.
		cur, err := h.Service.Get(r.Context(), acct, id)
		if err != nil {
			return 0, nil, err
		}
		current = cur.Draft.Framing
	}
	f, err := body.fields(current)
	if err != nil {
		return 0, nil, err
	}
	f.Metadata = metadataOnUpdate(body.Metadata)
	f.LiveKey = AccountFrom(r.Context()).Live
	as, err := h.Service.Update(r.Context(), acct, id, f)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentAssistant(as), nil
}

func (h *Assistants) publishAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Decode(r, &struct{}{}, true); err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForActiveVersion(r); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.Publish(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, PresentAssistant(as), nil
}

func (h *Assistants) activateAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		VersionID string `json:"version_id"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	if err := h.liveKeyForActiveVersion(r); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.Activate(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), body.VersionID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentAssistant(as), nil
}

// liveKeyForActiveVersion asks the key rule about the path's assistant for publish and
// activate, which change its active version: the assistant is live when a line on a
// real platform runs its active version (assigned with no version pinned), since the
// change decides what that line's callers reach (its prompt, its transfer
// destinations). A line that pins a version is not changed by either.
func (h *Assistants) liveKeyForActiveVersion(r *http.Request) error {
	return requireLiveKey(r, func() (liveResource, error) {
		ctx, acct := r.Context(), AccountFrom(r.Context()).ID
		a, err := h.Service.Get(ctx, acct, r.PathValue("id"))
		if err != nil || a.AssignedLines == 0 {
			return notLive, err
		}
		lines := h.Lines
		if lines == nil {
			lines, _ = h.Service.Store.(LineLister)
		}
		if lines == nil {
			return liveResource{true, fmt.Sprintf("assistant %s is assigned to %d line(s), which this API cannot read to tell "+
				"whether a real network reaches them", a.ID, a.AssignedLines)}, nil
		}
		q := listing.Query{Limit: 100}
		for {
			page, err := lines.ListLines(ctx, acct, q)
			if err != nil {
				return notLive, fmt.Errorf("lines of account %s: %w", acct, err)
			}
			for _, l := range page[:min(len(page), q.Limit)] {
				if l.AssistantID != a.ID || l.VersionID != "" {
					continue
				}
				if res := onPlatform("line "+l.ID+", which runs the assistant's active version,", l.Platform); res.live {
					return res, nil
				}
			}
			if len(page) <= q.Limit {
				return notLive, nil
			}
			q.StartingAfter = page[q.Limit-1].ID
		}
	})
}

func (h *Assistants) restoreAssistantDraft(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		VersionID string `json:"version_id"`
	}
	if err := Decode(r, &body, false); err != nil {
		return 0, nil, err
	}
	if body.VersionID != "" && !ident.Valid("ver", body.VersionID) {
		return 0, nil, invalidID("version_id", "ver")
	}
	as, err := h.Service.RestoreDraft(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), body.VersionID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentAssistant(as), nil
}

func (h *Assistants) duplicateAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		Name Nullable[string] `json:"name"`
	}
	if err := Decode(r, &body, true); err != nil {
		return 0, nil, err
	}
	if err := body.Name.NotNull("name"); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.Duplicate(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"), body.Name.Ptr())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, withToolSecret(as), nil
}

func (h *Assistants) archiveAssistant(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Decode(r, &struct{}{}, true); err != nil {
		return 0, nil, err
	}
	as, err := h.Service.Archive(r.Context(), AccountFrom(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, PresentAssistant(as), nil
}

// VoiceJSON is the voice object.
type VoiceJSON struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	Engine      string  `json:"engine"`
	Name        string  `json:"name"`
	Language    *string `json:"language"`
	Gender      *string `json:"gender"`
	Description string  `json:"description"`
	// DefaultForAvatars are the avatars that speak with this voice when a version names
	// none.
	DefaultForAvatars []string `json:"default_for_avatars"`
}

func (h *Assistants) listVoices(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	voices := h.Service.Voices()
	out := make([]VoiceJSON, 0, len(voices))
	for _, v := range voices {
		out = append(out, VoiceJSON{ID: v.ID, Object: "voice", Engine: v.Engine, Name: v.Name,
			Language: StringOrNull(v.Language), Gender: StringOrNull(v.Gender), Description: v.Description,
			DefaultForAvatars: persona.AvatarsVoicing(v.ID)})
	}
	return http.StatusOK, ListJSON[VoiceJSON]{Object: "list", Data: out}, nil
}

// ModelJSON is the model object: a language model a version's model may name.
type ModelJSON struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	// Vision: the model accepts images (LLM_VISION_MODELS), so a version with vision may
	// name it.
	Vision bool `json:"vision"`
}

func (h *Assistants) listModels(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := Query(r); err != nil {
		return 0, nil, err
	}
	out := make([]ModelJSON, 0, len(h.Service.Models))
	for _, m := range h.Service.Models {
		out = append(out, ModelJSON{ID: m, Object: "model", Vision: slices.Contains(h.Service.VisionModels, m)})
	}
	return http.StatusOK, ListJSON[ModelJSON]{Object: "list", Data: out}, nil
}
