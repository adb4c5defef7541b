package assistant

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/destination"
	"github.com/bridgeline/bridgeline/shared/egress"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/metadata"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/retry"
)

// Field limits, in characters. They are part of the contract in openapi.yaml.
const (
	MaxNameLen         = 200
	MaxSystemPromptLen = 20000
	MaxGreetingLen     = 2000
	MaxModelLen        = persona.MaxModelLen
)

// Fields is the draft content a create or a patch carries; nil means "not given".
type Fields struct {
	Name         *string
	SystemPrompt *string
	Greeting     *string
	AvatarID     *string
	Framing      *persona.Framing
	Voice        *string
	Model        *string
	// Language is a BCP-47 tag the deployment serves (language.go).
	Language *string
	// TransferDestinations replaces the draft's (empty clears them).
	TransferDestinations *[]persona.TransferDestination
	// Metadata changes the assistant's metadata (on create, the whole of it); nil leaves
	// it alone.
	Metadata *metadata.Patch
	// Calls change the call settings (tools, idle timeout, maximum duration); nil leaves
	// them alone.
	Calls *CallFields
	// Recording is RecordingOff or RecordingAudio.
	Recording *string
	// LiveKey is set when the request came with an sk_live_ key: a tool's URL must then
	// be https.
	LiveKey bool
}

// CallFields are the call settings a create or a patch carries; nil means "not given".
type CallFields struct {
	Tools              *[]Tool
	IdleTimeoutSeconds *int
	// MaxDurationSeconds sets the limit; ClearMaxDuration (null given) removes it.
	MaxDurationSeconds *int
	ClearMaxDuration   bool
	// Analysis sets the post-call analysis; ClearAnalysis (null given) turns it off.
	Analysis      *Analysis
	ClearAnalysis bool
	// NoiseSuppression turns the caller's noise suppression on or off.
	NoiseSuppression *bool
	// Interruption sets the interruption settings; ClearInterruption (null given)
	// brings back the default.
	Interruption      *persona.Interruption
	ClearInterruption bool
	// Vision is a persona.Vision* mode.
	Vision *string
}

// Service applies the assistant rules on top of a Store.
type Service struct {
	Store Store
	// HostedVoices are the hosted speech API's voices the deployment offers (TTS_VOICES),
	// beside persona.LocalVoices; a draft's voice must be one of Voices().
	HostedVoices []string
	// Models are the language models a version may name (LLM_MODELS) beside the fleet's
	// default; empty: a version names none. GET /v1/models lists them.
	Models []string
	// VisionModels are those of Models that accept images (LLM_VISION_MODELS): a
	// version with vision must name one.
	VisionModels []string
	// Languages are the languages the deployment's recogniser hears (STT_LANGUAGES,
	// persona.ParseLanguages); empty: persona.DefaultLanguage only. A version's language
	// must be one of them, spoken by a voice of Voices() (language.go).
	Languages []string
	// Secrets seals the tool secrets at rest; nil stores them in clear (unit tests only).
	Secrets Sealer
	// Destinations says where a tool's URL may point, as for webhook endpoints
	// (WEBHOOK_ALLOW_LOOPBACK).
	Destinations egress.Policy
	// MaxCallDuration is the deployment's longest call (MAX_SESSION_MINUTES): the most a
	// version's max_duration_seconds may say. Zero: 24 hours.
	MaxCallDuration time.Duration
	// OwnAvatars knows the accounts' own avatars (shared/avatars), which a draft may name
	// beside the built-in catalogue; nil: only the catalogue's.
	OwnAvatars AvatarChecker
	Now        func() time.Time
}

// AvatarChecker reports whether id is one of the account's own avatars.
type AvatarChecker interface {
	Exists(ctx context.Context, accountID, id string) (bool, error)
}

// knownAvatar: a built-in avatar, or one of the account's own.
func (s *Service) knownAvatar(ctx context.Context, accountID, id string) (bool, error) {
	if _, ok := persona.AvatarByID(id); ok {
		return true, nil
	}
	if s.OwnAvatars == nil || id == "" {
		return false, nil
	}
	return s.OwnAvatars.Exists(ctx, accountID, id)
}

// checkAvatar refuses a draft's avatar_id that is neither built in nor the account's.
func (s *Service) checkAvatar(ctx context.Context, accountID string, f Fields) error {
	if f.AvatarID == nil || *f.AvatarID == "" {
		return nil
	}
	ok, err := s.knownAvatar(ctx, accountID, *f.AvatarID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Invalid("avatar_id", fmt.Sprintf("unknown avatar %q; see GET /v1/avatars", *f.AvatarID))
	}
	return nil
}

// Voices is the catalogue of voices a draft may name.
func (s *Service) Voices() []persona.Voice { return persona.DeploymentVoices(s.HostedVoices) }

// Create makes a draft assistant. Only the name is required.
func (s *Service) Create(ctx context.Context, accountID string, f Fields) (Assistant, error) {
	if f.Name == nil {
		return Assistant{}, apierr.Missing("name")
	}
	if err := s.check(&f); err != nil {
		return Assistant{}, err
	}
	if err := s.checkAvatar(ctx, accountID, f); err != nil {
		return Assistant{}, err
	}
	plain, sealed, err := s.newToolSecret(ctx)
	if err != nil {
		return Assistant{}, err
	}
	now := s.now()
	a := Assistant{
		ID: ident.New("asst"), AccountID: accountID, Status: StatusActive,
		Draft: Draft{Framing: persona.DefaultFraming, Language: persona.DefaultLanguage,
			CallSettings: CallSettings{IdleTimeoutSeconds: DefaultIdleTimeoutSeconds}},
		ToolSecret: ToolSecret{Secret: sealed}, Revision: 1, CreatedAt: now, UpdatedAt: now,
	}
	if err := f.apply(&a); err != nil {
		return Assistant{}, err
	}
	if _, err := a.Draft.placeholders(); err != nil {
		return Assistant{}, err
	}
	if err := s.Store.CreateAssistant(ctx, a); err != nil {
		return Assistant{}, fmt.Errorf("create assistant: %w", err)
	}
	// The one time the secret is in clear outside the signer: the create's response.
	a.ToolSecret.Secret = plain
	return a, nil
}

// check validates f and normalises its tools (parameters compacted, defaults filled).
func (s *Service) check(f *Fields) error {
	if err := f.validate(s.Voices(), s.Models); err != nil {
		return err
	}
	if f.Language != nil {
		tag, err := s.validLanguage(*f.Language)
		if err != nil {
			return err
		}
		f.Language = &tag
	}
	c := f.Calls
	if c == nil {
		return nil
	}
	if c.Tools != nil {
		tools, err := validTools(*c.Tools, toolRules{dest: s.Destinations, liveKey: f.LiveKey})
		if err != nil {
			return err
		}
		c.Tools = &tools
	}
	if c.IdleTimeoutSeconds != nil {
		if err := validIdleTimeout(*c.IdleTimeoutSeconds); err != nil {
			return err
		}
	}
	if c.MaxDurationSeconds != nil {
		if err := validMaxDuration(*c.MaxDurationSeconds, s.maxCall()); err != nil {
			return err
		}
	}
	if c.Analysis != nil {
		a, err := validAnalysis(*c.Analysis)
		if err != nil {
			return err
		}
		c.Analysis = &a
	}
	if c.Interruption != nil {
		in, err := validInterruption(*c.Interruption)
		if err != nil {
			return err
		}
		c.Interruption = &in
	}
	if c.Vision != nil {
		if err := ValidVision("vision", *c.Vision); err != nil {
			return err
		}
	}
	return nil
}

// maxCall is the deployment's longest call.
func (s *Service) maxCall() time.Duration {
	if s.MaxCallDuration <= 0 {
		return 24 * time.Hour
	}
	return s.MaxCallDuration
}

// Get returns the account's assistant, or a not-found error for any other id.
func (s *Service) Get(ctx context.Context, accountID, id string) (Assistant, error) {
	a, err := s.Store.GetAssistant(ctx, id)
	return apierr.Owned(a, a.AccountID, err, accountID, apierr.NotFound("assistant", id))
}

// ListVersions returns up to q.Limit+1 of the assistant's versions, newest first, the
// page of q's cursor (version ids sort by publication, as numbers do). The assistant
// object carries only the newest ObjectVersions; this pages through all of them.
func (s *Service) ListVersions(ctx context.Context, accountID, id string, q listing.Query) ([]Version, error) {
	a, err := s.Get(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	newest := slices.Clone(a.Versions) // stored oldest first
	slices.Reverse(newest)
	return listing.Select(newest, func(v Version) string { return v.ID }, q), nil
}

// List returns a page of the account's assistants, newest first.
func (s *Service) List(ctx context.Context, accountID string, q ListQuery) ([]Assistant, error) {
	switch q.Status {
	case "":
		q.Status = StatusActive
	case StatusActive, StatusArchived, "all":
	default:
		return nil, apierr.Invalid("status", "status must be active, archived or all")
	}
	return s.Store.ListAssistants(ctx, accountID, q)
}

// Update edits the draft.
func (s *Service) Update(ctx context.Context, accountID, id string, f Fields) (Assistant, error) {
	if err := s.check(&f); err != nil {
		return Assistant{}, err
	}
	if err := s.checkAvatar(ctx, accountID, f); err != nil {
		return Assistant{}, err
	}
	return s.mutate(ctx, accountID, id, func(a *Assistant) error {
		if a.Status == StatusArchived {
			return archived(id)
		}
		if err := f.apply(a); err != nil {
			return err
		}
		// Checked on the whole draft: a PATCH of the greeting alone may push the names
		// of greeting and system prompt together over the limit.
		_, err := a.Draft.placeholders()
		return err
	})
}

// Publish snapshots the draft into the next numbered version and makes it active.
// Concurrent publishes each get their own number, with no gap: a publish that loses the
// race for a number reads again and takes the next one.
func (s *Service) Publish(ctx context.Context, accountID, id string) (Assistant, error) {
	var out Assistant
	err := retry.OnConflict(func() error {
		a, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		if a.Status == StatusArchived {
			return archived(id)
		}
		if err := a.Draft.complete(a.Name); err != nil {
			return err
		}
		if ok, err := s.knownAvatar(ctx, accountID, a.Draft.AvatarID); err != nil {
			return err
		} else if !ok {
			// Empty, or an avatar the account deleted after the draft named it.
			return apierr.Param(apierr.CodeDraftIncomplete, "avatar_id", "the draft needs avatar_id before it can be published")
		}
		if err := validVoice(a.Draft.Voice, s.Voices()); err != nil {
			// The deployment stopped offering the draft's voice (TTS_VOICES changed).
			return err
		}
		if err := validModel(a.Draft.Model, s.Models); err != nil {
			// The deployment stopped offering the draft's model (LLM_MODELS changed).
			return err
		}
		if err := visionModel(a.Draft.Vision, a.Draft.Model, s.VisionModels); err != nil {
			// Checked here, not as the draft is edited: vision and model may be set in
			// either order.
			return err
		}
		// The deployment may have stopped serving the draft's language (STT_LANGUAGES,
		// TTS_VOICES changed); the voice must speak it.
		language, err := s.validLanguage(LanguageOf(a.Draft.Language))
		if err != nil {
			return err
		}
		if err := s.checkVoiceLanguage(a.Draft); err != nil {
			return err
		}
		names, err := a.Draft.placeholders()
		if err != nil {
			return err
		}
		if len(a.Draft.Tools) > 0 && a.ToolSecret.Secret == "" {
			return noToolSecret(a.ID)
		}
		for i, d := range a.Draft.TransferDestinations {
			// A premium or shared-cost range is refused whatever a line allows; the
			// line's countries and the daily cap are checked at each transfer.
			if err := destination.Always(fmt.Sprintf("transfer_destinations[%d].to", i), d.To); err != nil {
				return err
			}
		}
		if m := a.Draft.MaxDurationSeconds; m != nil && *m > int(s.maxCall()/time.Second) {
			// The deployment's limit went down since the draft was saved.
			return validMaxDuration(*m, s.maxCall())
		}
		now := s.now()
		v := Version{
			ID: ident.New("ver"), AssistantID: a.ID, Number: a.VersionCount + 1, PublishedAt: now,
			Name: a.Name, SystemPrompt: a.Draft.SystemPrompt, Greeting: a.Draft.Greeting,
			AvatarID: a.Draft.AvatarID, Framing: a.Draft.Framing, Voice: a.Draft.Voice, Model: a.Draft.Model, Language: language,
			TransferDestinations: a.Draft.TransferDestinations, Variables: names, CallSettings: a.Draft.CallSettings,
			Recording: a.Draft.Recording,
		}
		next := a
		next.VersionCount = v.Number
		next.ActiveVersionID = v.ID
		next.UpdatedAt = now
		if err := s.Store.PublishVersion(ctx, next, v); err != nil {
			return fmt.Errorf("publish %s: %w", id, err)
		}
		next.Revision++
		next.Versions = append(append([]Version(nil), a.Versions...), v)
		out = next
		return nil
	})
	return out, err
}

// withNamedVersion applies apply to an assistant that is not archived and the version the
// request names as version_id, and saves the assistant. Errors: parameter_missing
// (version_id); resource_not_found for an unknown assistant or a version the assistant
// does not have (on version_id); assistant_archived.
func (s *Service) withNamedVersion(ctx context.Context, accountID, id, versionID string, apply func(*Assistant, Version)) (Assistant, error) {
	if versionID == "" {
		return Assistant{}, apierr.Missing("version_id")
	}
	return s.mutate(ctx, accountID, id, func(a *Assistant) error {
		if a.Status == StatusArchived {
			return archived(id)
		}
		for _, v := range a.Versions {
			if v.ID == versionID {
				apply(a, v)
				return nil
			}
		}
		return apierr.Param(apierr.CodeResourceNotFound, "version_id",
			fmt.Sprintf("assistant %s has no version %q", a.ID, versionID))
	})
}

// Activate makes a published version the one the next call uses.
func (s *Service) Activate(ctx context.Context, accountID, id, versionID string) (Assistant, error) {
	return s.withNamedVersion(ctx, accountID, id, versionID, func(a *Assistant, v Version) { a.ActiveVersionID = v.ID })
}

// Duplicate makes a new active assistant whose draft copies the source's, with no versions.
func (s *Service) Duplicate(ctx context.Context, accountID, id string, name *string) (Assistant, error) {
	src, err := s.Get(ctx, accountID, id)
	if err != nil {
		return Assistant{}, err
	}
	n := src.Name + " (copy)"
	if utf8.RuneCountInString(n) > MaxNameLen {
		n = string([]rune(n)[:MaxNameLen])
	}
	if name != nil {
		n = *name
	}
	d := src.Draft
	rec := RecordingOrOff(d.Recording)
	language := LanguageOf(d.Language)
	suppress := !d.NoiseSuppressionOff
	vision := persona.VisionOrOff(d.Vision)
	calls := &CallFields{Tools: &d.Tools, MaxDurationSeconds: d.MaxDurationSeconds, Analysis: d.Analysis, Interruption: d.Interruption,
		NoiseSuppression: &suppress, Vision: &vision}
	if d.IdleTimeoutSeconds != 0 {
		calls.IdleTimeoutSeconds = &d.IdleTimeoutSeconds
	}
	// The copy gets a tool secret of its own, shown in the response.
	return s.Create(ctx, accountID, Fields{
		Name: &n, SystemPrompt: &d.SystemPrompt, Greeting: &d.Greeting, AvatarID: &d.AvatarID, Framing: &d.Framing,
		Voice: &d.Voice, Model: &d.Model, Language: &language, TransferDestinations: &d.TransferDestinations, Calls: calls, Recording: &rec,
	})
}

// Archive makes an assistant read-only. It fails while a line is assigned to it.
func (s *Service) Archive(ctx context.Context, accountID, id string) (Assistant, error) {
	return s.mutate(ctx, accountID, id, func(a *Assistant) error {
		if a.Status == StatusArchived {
			return nil
		}
		if a.AssignedLines > 0 {
			return apierr.New(apierr.CodeAssistantInUse,
				fmt.Sprintf("assistant %s is assigned to %d line(s); unassign it first", id, a.AssignedLines))
		}
		a.Status = StatusArchived
		return nil
	})
}

// mutate reads the assistant, applies change, and writes it conditionally, reading again
// when another write got there first.
func (s *Service) mutate(ctx context.Context, accountID, id string, change func(*Assistant) error) (Assistant, error) {
	var out Assistant
	err := retry.OnConflict(func() error {
		a, err := s.Get(ctx, accountID, id)
		if err != nil {
			return err
		}
		before := a.Status
		if err := change(&a); err != nil {
			return err
		}
		if before == StatusArchived && a.Status == StatusArchived {
			out = a // archive of an archived assistant changes nothing
			return nil
		}
		a.UpdatedAt = s.now()
		if err := s.Store.UpdateAssistant(ctx, a); err != nil {
			return fmt.Errorf("update assistant %s: %w", id, err)
		}
		a.Revision++
		out = a
		return nil
	})
	return out, err
}

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

func archived(id string) error {
	return apierr.New(apierr.CodeAssistantArchived, fmt.Sprintf("assistant %s is archived and read-only", id))
}

func (f Fields) validate(voices []persona.Voice, models []string) error {
	if f.Recording != nil {
		if err := ValidRecording("recording", *f.Recording); err != nil {
			return err
		}
	}
	if f.Name != nil {
		if strings.TrimSpace(*f.Name) == "" {
			return apierr.Invalid("name", "name must not be empty")
		}
		if err := maxLen("name", *f.Name, MaxNameLen); err != nil {
			return err
		}
	}
	if f.SystemPrompt != nil {
		if err := maxLen("system_prompt", *f.SystemPrompt, MaxSystemPromptLen); err != nil {
			return err
		}
	}
	if f.Greeting != nil {
		if err := maxLen("greeting", *f.Greeting, MaxGreetingLen); err != nil {
			return err
		}
	}
	if f.Framing != nil {
		switch f.Framing.Shot {
		case persona.ShotCloseUp, persona.ShotMedium, persona.ShotWide:
		default:
			return apierr.Invalid("framing.shot", "framing.shot must be close_up, medium or wide")
		}
		switch f.Framing.Position {
		case persona.PositionLeft, persona.PositionCenter, persona.PositionRight:
		default:
			return apierr.Invalid("framing.position", "framing.position must be left, center or right")
		}
	}
	if f.Voice != nil {
		if err := validVoice(*f.Voice, voices); err != nil {
			return err
		}
	}
	if f.TransferDestinations != nil {
		if err := validDestinations(*f.TransferDestinations); err != nil {
			return err
		}
	}
	if f.Model != nil {
		if err := validModel(*f.Model, models); err != nil {
			return err
		}
	}
	if f.Metadata != nil {
		return f.Metadata.Validate()
	}
	return nil
}

// Bounds of transfer_destinations.
const (
	MaxTransferDestinations = 10
	MaxDestinationDesc      = 300
)

// validDestinations: at most MaxTransferDestinations, each an E.164 number or a SIP URI
// given once, with a description of 1-300 characters on one line.
func validDestinations(ds []persona.TransferDestination) error {
	const param = "transfer_destinations"
	if len(ds) > MaxTransferDestinations {
		return apierr.Invalid(param, fmt.Sprintf("%s holds at most %d destinations", param, MaxTransferDestinations))
	}
	seen := map[string]bool{}
	for i, d := range ds {
		if err := platform.CheckDestination(d.To); err != nil {
			return apierr.Invalid(fmt.Sprintf("%s[%d].to", param, i), fmt.Sprintf("%s[%d].to must be %v", param, i, err))
		}
		if seen[d.To] {
			return apierr.Invalid(param, fmt.Sprintf("%s names %s twice", param, d.To))
		}
		seen[d.To] = true
		if n := utf8.RuneCountInString(d.Description); n == 0 || n > MaxDestinationDesc || !utf8.ValidString(d.Description) ||
			strings.ContainsAny(d.Description, "\x00\r\n") {
			return apierr.Invalid(fmt.Sprintf("%s[%d].description", param, i),
				fmt.Sprintf("%s[%d].description must be 1-%d characters on one line: what the model is told this destination is for", param, i, MaxDestinationDesc))
		}
	}
	return nil
}

// validVoice: empty (the avatar's default) or a voice of the catalogue.
func validVoice(id string, voices []persona.Voice) error {
	if id == "" {
		return nil
	}
	for _, v := range voices {
		if v.ID == id {
			return nil
		}
	}
	return apierr.Invalid("voice", fmt.Sprintf("unknown voice %q; see GET /v1/voices", id))
}

// validModel: empty (the fleet's default, LLM_MODEL) or one of the models the operator
// offers (LLM_MODELS). With no list, no model can be named.
func validModel(m string, offered []string) error {
	if m == "" {
		return nil
	}
	if p := persona.ModelNameProblem(m); p != "" {
		return apierr.Invalid("model", "model "+p)
	}
	if !slices.Contains(offered, m) {
		if len(offered) == 0 {
			return apierr.Invalid("model", fmt.Sprintf("model %q is not offered: this deployment offers no model choice (LLM_MODELS is empty), so leave model empty; see GET /v1/models", m))
		}
		return apierr.Invalid("model", fmt.Sprintf("model %q is not offered by this deployment; see GET /v1/models", m))
	}
	return nil
}

// apply lays validated fields on a; only the metadata's count can still fail, against
// the metadata a holds.
func (f Fields) apply(a *Assistant) error {
	if f.Name != nil {
		a.Name = *f.Name
	}
	if f.SystemPrompt != nil {
		a.Draft.SystemPrompt = *f.SystemPrompt
	}
	if f.Greeting != nil {
		a.Draft.Greeting = *f.Greeting
	}
	if f.AvatarID != nil {
		a.Draft.AvatarID = *f.AvatarID
	}
	if f.Framing != nil {
		a.Draft.Framing = *f.Framing
	}
	if f.Voice != nil {
		a.Draft.Voice = *f.Voice
	}
	if f.Model != nil {
		a.Draft.Model = *f.Model
	}
	if f.Language != nil {
		a.Draft.Language = *f.Language
	}
	if f.TransferDestinations != nil {
		a.Draft.TransferDestinations = *f.TransferDestinations
		if len(a.Draft.TransferDestinations) == 0 {
			a.Draft.TransferDestinations = nil
		}
	}
	if c := f.Calls; c != nil {
		if c.Tools != nil {
			a.Draft.Tools = *c.Tools
		}
		if c.IdleTimeoutSeconds != nil {
			a.Draft.IdleTimeoutSeconds = *c.IdleTimeoutSeconds
		}
		if c.MaxDurationSeconds != nil {
			m := *c.MaxDurationSeconds
			a.Draft.MaxDurationSeconds = &m
		}
		if c.ClearMaxDuration {
			a.Draft.MaxDurationSeconds = nil
		}
		if c.Analysis != nil {
			an := *c.Analysis
			a.Draft.Analysis = &an
		}
		if c.ClearAnalysis {
			a.Draft.Analysis = nil
		}
		if c.NoiseSuppression != nil {
			a.Draft.NoiseSuppressionOff = !*c.NoiseSuppression
		}
		if c.Interruption != nil {
			in := *c.Interruption
			a.Draft.Interruption = &in
		}
		if c.ClearInterruption {
			a.Draft.Interruption = nil
		}
		if c.Vision != nil {
			a.Draft.Vision = *c.Vision
		}
	}
	if f.Recording != nil {
		a.Draft.Recording = *f.Recording
	}
	if f.Metadata != nil {
		m, err := f.Metadata.Apply(a.Metadata)
		if err != nil {
			return err
		}
		a.Metadata = m
	}
	return nil
}

func maxLen(param, s string, n int) error {
	if !utf8.ValidString(s) {
		return apierr.Invalid(param, param+" must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > n {
		return apierr.Invalid(param, fmt.Sprintf("%s must be at most %d characters", param, n))
	}
	return nil
}

// complete checks the draft can be published: a name, a system prompt and a greeting
// (the avatar is Publish's knownAvatar).
func (d Draft) complete(name string) error {
	incomplete := func(param string) error {
		return apierr.Param(apierr.CodeDraftIncomplete, param, "the draft needs "+param+" before it can be published")
	}
	switch {
	case strings.TrimSpace(name) == "":
		return incomplete("name")
	case strings.TrimSpace(d.SystemPrompt) == "":
		return incomplete("system_prompt")
	case strings.TrimSpace(d.Greeting) == "":
		return incomplete("greeting")
	}
	return nil // the avatar: Publish asks knownAvatar
}
