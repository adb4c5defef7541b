package assistant_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
	"github.com/bridgeline/bridgeline/shared/ident"
)

// TestLanguage: a draft's language is a BCP-47 tag (canonical case kept), en by
// default; one the deployment does not serve (its recogniser does not hear it, STT_LANGUAGES,
// or no voice speaks it) is refused at create, update and publish with the languages it
// serves; at publish the voice must speak the language, and a version naming none
// publishes with the language in it (the worker takes the language's default voice).
func TestLanguage(t *testing.T) {
	svc, _ := newService(t)
	svc.HostedVoices = nil
	ctx, acct := context.Background(), ident.New("acct")

	a, err := svc.Create(ctx, acct, complete("English by default"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Draft.Language != "en" {
		t.Errorf("a new draft's language = %q, want en", a.Draft.Language)
	}
	// Offline: pocketsphinx hears English only.
	f := complete("Ana")
	f.Language = ptr("es")
	_, err = svc.Create(ctx, acct, f)
	wantCode(t, "Spanish offline", err, apierr.CodeLanguageNotSupported, "language")
	if e, _ := apierr.As(err); e == nil || !strings.Contains(e.Message, "it serves en") {
		t.Errorf("the refusal %v does not name the languages served", err)
	}
	for _, bad := range []string{"", "spanish", "es_MX", "es-", "e", "es-MX-x-foo"} {
		_, err = svc.Create(ctx, acct, assistant.Fields{Name: ptr("A"), Language: ptr(bad)})
		wantCode(t, "language "+bad, err, apierr.CodeParameterInvalid, "language")
	}

	// Deepgram, configured to hear English and Spanish.
	svc.Languages = []string{"en", "es"}
	b, err := svc.Create(ctx, acct, f)
	if err != nil {
		t.Fatalf("Spanish with a recogniser that hears it: %v", err)
	}
	b, err = svc.Update(ctx, acct, b.ID, assistant.Fields{Language: ptr("ES-mx")})
	if err != nil || b.Draft.Language != "es-MX" {
		t.Fatalf("update to es-MX: %q, %v; want es-MX in canonical case (es hears its regions)", b.Draft.Language, err)
	}
	_, err = svc.Update(ctx, acct, b.ID, assistant.Fields{Language: ptr("fr")})
	wantCode(t, "French, no recogniser", err, apierr.CodeLanguageNotSupported, "language")

	// The voice must speak the language: refused at publish, not at update (the two
	// may change in either order).
	b, err = svc.Update(ctx, acct, b.ID, assistant.Fields{Voice: ptr("flite-slt")})
	if err != nil {
		t.Fatalf("an English voice on a Spanish draft, before publish: %v", err)
	}
	_, err = svc.Publish(ctx, acct, b.ID)
	wantCode(t, "publish of a Spanish draft with an English voice", err, apierr.CodeParameterInvalid, "voice")
	if _, err = svc.Update(ctx, acct, b.ID, assistant.Fields{Voice: ptr("espeak-es-m3")}); err != nil {
		t.Fatal(err)
	}
	b, err = svc.Publish(ctx, acct, b.ID)
	if err != nil {
		t.Fatalf("publish with a Spanish voice: %v", err)
	}
	if v := b.Versions[len(b.Versions)-1]; v.Language != "es-MX" || v.Voice != "espeak-es-m3" {
		t.Errorf("version language %q voice %q, want es-MX and espeak-es-m3", v.Language, v.Voice)
	}
	// No voice: the language's default voice speaks.
	if _, err = svc.Update(ctx, acct, b.ID, assistant.Fields{Voice: ptr("")}); err != nil {
		t.Fatal(err)
	}
	if _, err = svc.Publish(ctx, acct, b.ID); err != nil {
		t.Errorf("publish of a Spanish draft naming no voice: %v", err)
	}

	// The operator stops serving Spanish: publish refuses what the draft says.
	svc.Languages = []string{"en"}
	_, err = svc.Publish(ctx, acct, b.ID)
	wantCode(t, "publish after the deployment dropped Spanish", err, apierr.CodeLanguageNotSupported, "language")

	// A language the recogniser hears but no local voice speaks: served only with
	// hosted voices, and then the draft names one.
	svc.Languages = []string{"en", "ja"}
	f = complete("Haruka")
	f.Language = ptr("ja")
	_, err = svc.Create(ctx, acct, f)
	wantCode(t, "Japanese with no voice for it", err, apierr.CodeLanguageNotSupported, "language")
	svc.HostedVoices = []string{"nova"}
	c, err := svc.Create(ctx, acct, f)
	if err != nil {
		t.Fatalf("Japanese with a hosted voice offered: %v", err)
	}
	_, err = svc.Publish(ctx, acct, c.ID)
	wantCode(t, "publish of Japanese naming no voice", err, apierr.CodeDraftIncomplete, "voice")
	if _, err = svc.Update(ctx, acct, c.ID, assistant.Fields{Voice: ptr("hosted-nova")}); err != nil {
		t.Fatal(err)
	}
	if _, err = svc.Publish(ctx, acct, c.ID); err != nil {
		t.Errorf("publish of Japanese with a hosted voice: %v", err)
	}
}
