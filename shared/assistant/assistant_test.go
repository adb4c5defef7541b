package assistant_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/persona"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// newService is the assistant service on a fresh SQLite store.
func newService(t *testing.T) (*assistant.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "assistants.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &assistant.Service{Store: st, HostedVoices: []string{"nova"}, Models: []string{"meta-llama/Llama-3.1-8B-Instruct", "gpt-4o-mini"}, Now: time.Now}, st
}

func ptr[T any](v T) *T { return &v }

// complete are draft fields that can be published.
func complete(name string) assistant.Fields {
	return assistant.Fields{Name: ptr(name), SystemPrompt: ptr("Be kind."), Greeting: ptr("Hello {{caller_name|there}}."),
		AvatarID: ptr(persona.Avatars[0].ID)}
}

// wantCode fails unless err is the apierr with code on param ("" code: no error).
func wantCode(t *testing.T, what string, err error, code, param string) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Errorf("%s = %v, want no error", what, err)
		}
		return
	}
	e, ok := apierr.As(err)
	if !ok || e.Code != code || e.Param != param {
		t.Errorf("%s = %v, want %s on %q", what, err, code, param)
	}
}

// TestFieldRules: what a create or a patch may carry.
func TestFieldRules(t *testing.T) {
	svc, _ := newService(t)
	acct := ident.New("acct")
	for _, tc := range []struct {
		name        string
		fields      assistant.Fields
		code, param string
	}{
		{"a name alone", assistant.Fields{Name: ptr("Ada")}, "", ""},
		{"every field", complete("Ada"), "", ""},
		{"blank name", assistant.Fields{Name: ptr("  ")}, apierr.CodeParameterInvalid, "name"},
		{"name at the limit", assistant.Fields{Name: ptr(strings.Repeat("n", assistant.MaxNameLen))}, "", ""},
		{"name past the limit", assistant.Fields{Name: ptr(strings.Repeat("n", assistant.MaxNameLen+1))}, apierr.CodeParameterInvalid, "name"},
		{"name of runes at the limit", assistant.Fields{Name: ptr(strings.Repeat("é", assistant.MaxNameLen))}, "", ""},
		{"name not UTF-8", assistant.Fields{Name: ptr("A\xffda")}, apierr.CodeParameterInvalid, "name"},
		{"system prompt past the limit", assistant.Fields{Name: ptr("A"), SystemPrompt: ptr(strings.Repeat("p", assistant.MaxSystemPromptLen+1))}, apierr.CodeParameterInvalid, "system_prompt"},
		{"greeting past the limit", assistant.Fields{Name: ptr("A"), Greeting: ptr(strings.Repeat("g", assistant.MaxGreetingLen+1))}, apierr.CodeParameterInvalid, "greeting"},
		{"unknown avatar", assistant.Fields{Name: ptr("A"), AvatarID: ptr("ava_nope")}, apierr.CodeParameterInvalid, "avatar_id"},
		{"empty avatar: none yet", assistant.Fields{Name: ptr("A"), AvatarID: ptr("")}, "", ""},
		{"unknown shot", assistant.Fields{Name: ptr("A"), Framing: &persona.Framing{Shot: "huge", Position: persona.PositionLeft}}, apierr.CodeParameterInvalid, "framing.shot"},
		{"unknown position", assistant.Fields{Name: ptr("A"), Framing: &persona.Framing{Shot: persona.ShotWide, Position: "up"}}, apierr.CodeParameterInvalid, "framing.position"},
		{"a hosted voice offered", assistant.Fields{Name: ptr("A"), Voice: ptr("hosted-nova")}, "", ""},
		{"a hosted voice not offered", assistant.Fields{Name: ptr("A"), Voice: ptr("hosted-echo")}, apierr.CodeParameterInvalid, "voice"},
		{"a model offered", assistant.Fields{Name: ptr("A"), Model: ptr("meta-llama/Llama-3.1-8B-Instruct")}, "", ""},
		{"a model not offered", assistant.Fields{Name: ptr("A"), Model: ptr("gpt-4o")}, apierr.CodeParameterInvalid, "model"},
		{"the default model", assistant.Fields{Name: ptr("A"), Model: ptr("")}, "", ""},
		{"a model with a space", assistant.Fields{Name: ptr("A"), Model: ptr("gpt 4")}, apierr.CodeParameterInvalid, "model"},
		{"a model past the limit", assistant.Fields{Name: ptr("A"), Model: ptr(strings.Repeat("m", assistant.MaxModelLen+1))}, apierr.CodeParameterInvalid, "model"},
	} {
		_, err := svc.Create(context.Background(), acct, tc.fields)
		wantCode(t, tc.name, err, tc.code, tc.param)
	}
}

// TestModelAllowList: a version's model is one the operator offers (LLM_MODELS) or empty,
// at create, at every draft update and at publish (the list may shrink after the draft
// was saved); a deployment that offers none lets no draft name a model.
func TestModelAllowList(t *testing.T) {
	svc, _ := newService(t)
	ctx, acct := context.Background(), ident.New("acct")
	f := complete("Ada")
	f.Model = ptr("gpt-4o-mini")
	a, err := svc.Create(ctx, acct, f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Update(ctx, acct, a.ID, assistant.Fields{Model: ptr("gpt-4.5-preview")})
	wantCode(t, "update to a model not offered", err, apierr.CodeParameterInvalid, "model")
	if got, _ := svc.Get(ctx, acct, a.ID); got.Draft.Model != "gpt-4o-mini" {
		t.Errorf("draft model after a refused update = %q, want gpt-4o-mini", got.Draft.Model)
	}
	svc.Models = []string{"meta-llama/Llama-3.1-8B-Instruct"} // the operator drops gpt-4o-mini
	_, err = svc.Publish(ctx, acct, a.ID)
	wantCode(t, "publish of a model no longer offered", err, apierr.CodeParameterInvalid, "model")
	if _, err := svc.Update(ctx, acct, a.ID, assistant.Fields{Model: ptr("meta-llama/Llama-3.1-8B-Instruct")}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Publish(ctx, acct, a.ID); err != nil {
		t.Errorf("publish of an offered model = %v", err)
	}
	svc.Models = nil // no LLM_MODELS: no choice
	_, err = svc.Create(ctx, acct, assistant.Fields{Name: ptr("B"), Model: ptr("gpt-4o-mini")})
	wantCode(t, "a model with no list", err, apierr.CodeParameterInvalid, "model")
	_, err = svc.Publish(ctx, acct, a.ID)
	wantCode(t, "publish with no list", err, apierr.CodeParameterInvalid, "model")
	if _, err := svc.Create(ctx, acct, assistant.Fields{Name: ptr("C"), Model: ptr("")}); err != nil {
		t.Errorf("the default model with no list = %v", err)
	}
}

// TestVisionNeedsAModelThatSees: vision is off by default and takes only its modes; a
// draft with vision publishes only when it names one of the models the deployment says
// accept images (LLM_VISION_MODELS), and is refused with model_lacks_vision on model
// otherwise: no model named, a text-only model, or a deployment that names none.
// Restoring and duplicating keep the setting.
func TestVisionNeedsAModelThatSees(t *testing.T) {
	svc, _ := newService(t)
	svc.Models = []string{"gpt-4o-mini", "llama3.1:8b"}
	svc.VisionModels = []string{"gpt-4o-mini"}
	ctx, acct := context.Background(), ident.New("acct")
	a, err := svc.Create(ctx, acct, complete("Ada"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Draft.Vision != "" || persona.VisionOrOff(a.Draft.Vision) != persona.VisionOff {
		t.Errorf("new draft's vision = %q, want off", a.Draft.Vision)
	}
	_, err = svc.Update(ctx, acct, a.ID, assistant.Fields{Calls: &assistant.CallFields{Vision: ptr("eyes")}})
	wantCode(t, "an unknown vision mode", err, apierr.CodeParameterInvalid, "vision")
	if _, err := svc.Update(ctx, acct, a.ID, assistant.Fields{Calls: &assistant.CallFields{Vision: ptr(persona.VisionScreen)}}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Publish(ctx, acct, a.ID)
	wantCode(t, "vision with the fleet's default model", err, apierr.CodeModelLacksVision, "model")
	if _, err := svc.Update(ctx, acct, a.ID, assistant.Fields{Model: ptr("llama3.1:8b")}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Publish(ctx, acct, a.ID)
	wantCode(t, "vision on a text-only model", err, apierr.CodeModelLacksVision, "model")
	if e, _ := apierr.As(err); e == nil || !strings.Contains(e.Message, "gpt-4o-mini") {
		t.Errorf("refusal %v, want it to name the model that accepts images", err)
	}
	if _, err := svc.Update(ctx, acct, a.ID, assistant.Fields{Model: ptr("gpt-4o-mini")}); err != nil {
		t.Fatal(err)
	}
	pub, err := svc.Publish(ctx, acct, a.ID)
	if err != nil {
		t.Fatalf("publish of vision on a model that sees = %v", err)
	}
	if v := pub.Versions[len(pub.Versions)-1]; v.Vision != persona.VisionScreen {
		t.Errorf("published vision = %q, want screen", v.Vision)
	}
	if dup, err := svc.Duplicate(ctx, acct, a.ID, nil); err != nil || dup.Draft.Vision != persona.VisionScreen {
		t.Errorf("duplicate's vision = %q (%v), want screen", dup.Draft.Vision, err)
	}
	svc.VisionModels = nil // the operator no longer says any model sees
	_, err = svc.Publish(ctx, acct, a.ID)
	wantCode(t, "vision on a deployment that names no model that sees", err, apierr.CodeModelLacksVision, "model")
	if _, err := svc.Update(ctx, acct, a.ID, assistant.Fields{Calls: &assistant.CallFields{Vision: ptr(persona.VisionOff)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Publish(ctx, acct, a.ID); err != nil {
		t.Errorf("publish with vision off = %v", err)
	}
}

// TestRenderedWithinFieldLimits: a call's values may each be within bounds and still
// render a text past its field limit (a placeholder used many times); Rendered refuses
// that on "variables", and RenderedWithin cuts the texts to the limits.
func TestRenderedWithinFieldLimits(t *testing.T) {
	v := assistant.Version{Greeting: strings.Repeat("{{a}}", 5), SystemPrompt: strings.Repeat("{{a}}", 41)}
	for _, tc := range []struct {
		name      string
		value     string
		wantParam string
	}{
		{"the greeting at its limit", strings.Repeat("é", assistant.MaxGreetingLen/5), ""},
		{"the greeting past its limit", strings.Repeat("é", assistant.MaxGreetingLen/5+1), "variables"},
		{"short values", "Ada", ""},
	} {
		g, p, err := v.Rendered(map[string]string{"a": tc.value})
		if tc.wantParam == "" {
			wantCode(t, tc.name, err, "", "")
		} else {
			wantCode(t, tc.name, err, apierr.CodeParameterInvalid, tc.wantParam)
		}
		if g != strings.Repeat(tc.value, 5) || p != strings.Repeat(tc.value, 41) {
			t.Errorf("%s: rendered texts of %d and %d characters", tc.name, len(g), len(p))
		}
	}
	// 41 values of 500 characters: a system prompt of 20,500, past 20,000.
	_, _, err := v.Rendered(map[string]string{"a": strings.Repeat("x", 500)})
	wantCode(t, "the system prompt past its limit", err, apierr.CodeParameterInvalid, "variables")
	g, p, ok := v.RenderedWithin(map[string]string{"a": strings.Repeat("é", 500)})
	if ok || utf8.RuneCountInString(g) != assistant.MaxGreetingLen || utf8.RuneCountInString(p) != assistant.MaxSystemPromptLen {
		t.Errorf("RenderedWithin = %d, %d characters, %v; want cut to %d, %d", utf8.RuneCountInString(g), utf8.RuneCountInString(p), ok,
			assistant.MaxGreetingLen, assistant.MaxSystemPromptLen)
	}
}

// TestPublishRules: a draft publishes once it has a name, a system prompt, a greeting
// and a known avatar; versions are numbered from 1 and the new one is active; an
// archived assistant publishes nothing.
func TestPublishRules(t *testing.T) {
	svc, _ := newService(t)
	ctx, acct := context.Background(), ident.New("acct")
	for _, tc := range []struct {
		name  string
		edit  func(*assistant.Fields)
		param string // the missing part; "" publishes
	}{
		{"complete", func(*assistant.Fields) {}, ""},
		{"no system prompt", func(f *assistant.Fields) { f.SystemPrompt = ptr(" ") }, "system_prompt"},
		{"no greeting", func(f *assistant.Fields) { f.Greeting = nil }, "greeting"},
		{"no avatar", func(f *assistant.Fields) { f.AvatarID = nil }, "avatar_id"},
	} {
		f := complete("Ada")
		tc.edit(&f)
		a, err := svc.Create(ctx, acct, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Publish(ctx, acct, a.ID)
		if tc.param != "" {
			wantCode(t, tc.name, err, apierr.CodeDraftIncomplete, tc.param)
			continue
		}
		v, ok := got.ActiveVersion()
		if err != nil || !ok || v.Number != 1 || got.VersionCount != 1 {
			t.Errorf("%s: Publish = %+v, %v; want version 1 active", tc.name, got, err)
		}
		if names := v.VariableNames(); len(names) != 1 || names[0] != "caller_name" {
			t.Errorf("%s: version variables = %v, want [caller_name]", tc.name, names)
		}
		again, _ := svc.Publish(ctx, acct, a.ID)
		if v2, _ := again.ActiveVersion(); v2.Number != 2 {
			t.Errorf("%s: second publish made version %d, want 2", tc.name, v2.Number)
		}
		if _, err := svc.Archive(ctx, acct, a.ID); err != nil {
			t.Fatal(err)
		}
		_, err = svc.Publish(ctx, acct, a.ID)
		wantCode(t, tc.name+", archived", err, apierr.CodeAssistantArchived, "")
	}
	_, err := svc.Publish(ctx, ident.New("acct"), ident.New("asst"))
	wantCode(t, "unknown assistant", err, apierr.CodeResourceNotFound, "id")
}

// TestCanRunACall: the one rule of whether an assistant can run a call (Runnable,
// CallVersion): the account's own, not archived, with a published version active, or the
// pinned version of it.
func TestCanRunACall(t *testing.T) {
	svc, st := newService(t)
	ctx, acct := context.Background(), ident.New("acct")
	create := func(name string, publish, archive bool) assistant.Assistant {
		t.Helper()
		a, err := svc.Create(ctx, acct, complete(name))
		if err != nil {
			t.Fatal(err)
		}
		if publish {
			if a, err = svc.Publish(ctx, acct, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		if archive {
			if a, err = svc.Archive(ctx, acct, a.ID); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	published := create("Published", true, false)
	v1, _ := published.ActiveVersion()
	if _, err := svc.Publish(ctx, acct, published.ID); err != nil { // v2 is active now
		t.Fatal(err)
	}
	draft := create("Draft", false, false)
	archived := create("Archived", true, true)
	other := create("Other", true, false)
	otherVersion, _ := other.ActiveVersion()
	unknown := ident.New("asst")

	for _, tc := range []struct {
		name        string
		account, id string
		pinned      string
		wantNumber  int // the version the call runs, when it can
		code, param string
	}{
		{"published: the active version", acct, published.ID, "", 2, "", ""},
		{"published, pinned to version 1", acct, published.ID, v1.ID, 1, "", ""},
		{"never published", acct, draft.ID, "", 0, apierr.CodeAssistantNotPublished, "assistant_id"},
		{"archived", acct, archived.ID, "", 0, apierr.CodeAssistantArchived, "assistant_id"},
		{"archived, pinned", acct, archived.ID, v1.ID, 0, apierr.CodeAssistantArchived, "assistant_id"},
		{"unknown", acct, unknown, "", 0, apierr.CodeResourceNotFound, "assistant_id"},
		{"another account's", ident.New("acct"), published.ID, "", 0, apierr.CodeResourceNotFound, "assistant_id"},
		{"pinned to another assistant's version", acct, published.ID, otherVersion.ID, 0, apierr.CodeResourceNotFound, "version_id"},
		{"pinned to an unknown version", acct, published.ID, ident.New("ver"), 0, apierr.CodeResourceNotFound, "version_id"},
	} {
		v, err := assistant.CallVersion(ctx, st, tc.account, tc.id, tc.pinned)
		wantCode(t, "CallVersion: "+tc.name, err, tc.code, tc.param)
		if err == nil && (v.Number != tc.wantNumber || v.AssistantID != tc.id) {
			t.Errorf("CallVersion: %s = version %d of %s, want %d of %s", tc.name, v.Number, v.AssistantID, tc.wantNumber, tc.id)
		}
		if tc.pinned == "" {
			_, err := assistant.Runnable(ctx, st, tc.account, tc.id)
			wantCode(t, "Runnable: "+tc.name, err, tc.code, tc.param)
		}
	}
}

// TestPublishRefusesPremiumTransferDestinations: a transfer destination in a premium-rate
// or shared-cost range (as an E.164 number or a SIP URI's user) is 403
// destination_not_allowed at publish, whatever a line would allow; an ordinary number
// publishes (its country is checked at each transfer, against the call's line).
func TestPublishRefusesPremiumTransferDestinations(t *testing.T) {
	svc, _ := newService(t)
	ctx, acct := context.Background(), ident.New("acct")
	for to, refused := range map[string]bool{
		"+88299123456":                      true,
		"+449012345678":                     true,
		"sip:+979123456789@sip.example.com": true,
		"+15550100009":                      false,
		"sip:agent@pbx.example.com":         false,
	} {
		f := complete("Ada")
		ds := []persona.TransferDestination{{To: to, Description: "the front desk"}}
		f.TransferDestinations = &ds
		a, err := svc.Create(ctx, acct, f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Publish(ctx, acct, a.ID)
		if !refused {
			if err != nil {
				t.Errorf("publish with %s: %v, want published", to, err)
			}
			continue
		}
		wantCode(t, "publish with "+to, err, apierr.CodeDestinationNotAllowed, "transfer_destinations[0].to")
	}
}
