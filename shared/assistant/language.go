package assistant

import (
	"fmt"
	"strings"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// A version's language (a BCP-47 tag, default persona.DefaultLanguage) is what the
// caller is heard and answered in: the recogniser is asked for it, the voice speaks it,
// and the turn-taking words (acknowledgements, stop words, how a sentence ends) are its.
// The deployment serves a language when its recogniser hears it (STT_LANGUAGES:
// pocketsphinx hears English only) and one of its voices speaks it. A language it does
// not serve is refused at create, update and publish (language_not_supported, naming
// the ones it serves); so, at publish, is a version whose voice speaks another language.
// A version that names no voice speaks with its avatar's default voice when that speaks
// the language, else with the language's default voice (persona.VoiceFor).

// LanguageOf is a draft's or version's language, the default filled in.
func LanguageOf(language string) string {
	if language == "" {
		return persona.DefaultLanguage
	}
	return language
}

// heardLanguages are the languages the deployment's recogniser hears.
func (s *Service) heardLanguages() []string {
	if len(s.Languages) == 0 {
		return []string{persona.DefaultLanguage}
	}
	return s.Languages
}

// ServedLanguages are the languages a version may have: those the recogniser hears
// (STT_LANGUAGES) that a voice of the catalogue speaks.
func (s *Service) ServedLanguages() []string {
	var out []string
	voices := s.Voices()
	for _, l := range s.heardLanguages() {
		for _, v := range voices {
			if v.Speaks(l) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// serves says whether the deployment serves language: its recogniser hears it and a
// voice speaks it.
func (s *Service) serves(language string) bool {
	if !persona.Hears(s.heardLanguages(), language) {
		return false
	}
	for _, v := range s.Voices() {
		if v.Speaks(language) {
			return true
		}
	}
	return false
}

// validLanguage checks a version's language and returns it in canonical case: a BCP-47
// tag the deployment serves.
func (s *Service) validLanguage(language string) (string, error) {
	tag, err := persona.CanonicalLanguage(language)
	if err != nil {
		return "", apierr.Invalid("language", "language "+err.Error())
	}
	if !s.serves(tag) {
		return "", apierr.Param(apierr.CodeLanguageNotSupported, "language",
			fmt.Sprintf("language %q is not served by this deployment (its recogniser and voices); it serves %s", tag,
				strings.Join(s.ServedLanguages(), ", ")))
	}
	return tag, nil
}

// checkVoiceLanguage is publish's check of a draft's voice against its language: a
// voice it names speaks the language; without one, a local voice does (the avatar's
// default or the language's, persona.VoiceFor): a language only hosted voices speak
// needs one named.
func (s *Service) checkVoiceLanguage(d Draft) error {
	language := LanguageOf(d.Language)
	if d.Voice == "" {
		if _, ok := persona.LanguageVoice(language); !ok {
			return apierr.Param(apierr.CodeDraftIncomplete, "voice",
				fmt.Sprintf("the draft needs a voice before it can be published: no built-in voice speaks %s; name one of GET /v1/voices", language))
		}
		return nil
	}
	for _, v := range s.Voices() {
		if v.ID == d.Voice && !v.Speaks(language) {
			return apierr.Invalid("voice", fmt.Sprintf("voice %q speaks %s, not the draft's language %s; name a voice of GET /v1/voices whose language is %s, or none",
				d.Voice, v.Language, language, persona.PrimaryLanguage(language)))
		}
	}
	return nil
}
