package conversation

import (
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestJudge(t *testing.T) {
	en := rulesFor("en-US")
	def := newInterruptRule(nil)
	tuned := newInterruptRule(&persona.Interruption{MinWords: 3, Acknowledgements: []string{"sure thing"}})
	tests := []struct {
		text string
		rule interruptRule
		want verdict
	}{
		{"", def, undecided},
		{"Uh-huh.", def, backchannel},
		{"mm hmm", def, backchannel},
		{"yeah, right", def, backchannel},
		{"all right", def, backchannel},
		{"okay", def, backchannel},
		{"wait", def, cutIn},
		{"yeah hold on", def, cutIn},
		{"okay?", def, cutIn},
		{"how much", def, cutIn},
		{"red ones", def, cutIn},
		{"yeah yeah yeah yeah yeah", def, cutIn},
		{"sure thing", def, cutIn},
		{"sure thing", tuned, backchannel},
		{"those lovely flowers", tuned, cutIn},
		{"lovely flowers", tuned, backchannel},
		{"stop", tuned, cutIn},
	}
	for _, tt := range []struct {
		text string
		want verdict
	}{{"I", undecided}, {"the", undecided}, {"yeah", backchannel}, {"wait", undecided}, {"yeah no", undecided},
		{"what", undecided}, {"no okay", cutIn}, {"wait stop", cutIn}, {"what time", cutIn}, {"red ones", cutIn}, {"yeah bro", undecided}} {
		if got := en.judge(tt.text, def, false); got != tt.want {
			t.Errorf("interim judge(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	for _, tt := range tests {
		if got := en.judge(tt.text, tt.rule, true); got != tt.want {
			t.Errorf("judge(%q, %+v) = %v, want %v", tt.text, tt.rule, got, tt.want)
		}
	}
}

func TestEnding(t *testing.T) {
	en := rulesFor("")
	tests := []struct {
		text string
		want ending
	}{
		{"", unknownEnd},
		{"When do you open?", finished},
		{"I'd like a table for two.", finished},
		{"I'd like to book a", unfinished},
		{"I'd like to book a table and", unfinished},
		{"my number is four one five", unfinished},
		{"my number is 415", unfinished},
		{"my number is 415.", unfinished},
		{"well,", unfinished},
		{"so I was thinking...", unfinished},
		{"a table for two", unknownEnd},
		{"what time do you open", finished},
		{"roses", unknownEnd},
	}
	for _, tt := range tests {
		if got := en.ending(tt.text); got != tt.want {
			t.Errorf("ending(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// TestSpanishRules: a Spanish version's words: "vale" and "sí, claro" over the
// assistant are acknowledgements, "espera" and a question cut it; a Spanish sentence
// that ends on a preposition or reads digits out is unfinished. English's rules take
// "vale" for a word that cuts in.
func TestSpanishRules(t *testing.T) {
	es := rulesFor("es-MX")
	def := newInterruptRule(nil)
	for _, tt := range []struct {
		text  string
		final bool
		want  verdict
	}{
		{"Vale.", true, backchannel},
		{"sí, claro", true, backchannel},
		{"ajá", true, backchannel},
		{"de acuerdo", true, backchannel},
		{"ya, entiendo", true, backchannel},
		{"vale", false, backchannel},
		{"espera", true, cutIn},
		{"espera", false, undecided}, // a lone interim stop word is held, as in English
		{"espera un momento", false, cutIn},
		{"vale, pero", true, cutIn},
		{"un momento", true, cutIn},
		{"¿Qué hora es?", true, cutIn},
		{"¿Cuándo", false, undecided},
		{"por qué", true, cutIn},
		{"cuánto cuesta", false, cutIn},
		{"las rosas rojas", true, cutIn},
	} {
		if got := es.judge(tt.text, def, tt.final); got != tt.want {
			t.Errorf("Spanish judge(%q, final %v) = %v, want %v", tt.text, tt.final, got, tt.want)
		}
	}
	if got := rulesFor("en").judge("vale", def, true); got != cutIn {
		t.Errorf("English judge(vale) = %v, want cut in: the rules follow the language", got)
	}
	for _, tt := range []struct {
		text string
		want ending
	}{
		{"¿A qué hora abren mañana?", finished},
		{"Quiero reservar una mesa para dos.", finished},
		{"quiero reservar una mesa para", unfinished},
		{"quiero reservar una mesa y", unfinished},
		{"mi número es cuatro uno cinco", unfinished},
		{"cuándo abren mañana", finished},
		{"por qué cierran tan pronto", finished},
		{"una mesa para dos", unknownEnd},
	} {
		if got := es.ending(tt.text); got != tt.want {
			t.Errorf("Spanish ending(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if rulesFor("nl") != rulesFor("en") || rulesFor("ES") != rulesFor("es") {
		t.Error("rulesFor: want English's rules for a language without its own, and the tag's case not to matter")
	}
}

// TestMoreLanguagesRules: German, French, Portuguese and Italian callers' acknowledgements
// over the assistant pass, their stop words and questions cut in, and a sentence that
// ends on an article or preposition, or reads digits out, is unfinished; each language
// by its own words (English's rules take "ja" for a word that cuts in).
func TestMoreLanguagesRules(t *testing.T) {
	def := newInterruptRule(nil)
	for _, tt := range []struct {
		lang, text string
		want       verdict
	}{
		{"de", "Ja, genau.", backchannel}, {"de", "alles klar", backchannel}, {"de", "mhm", backchannel},
		{"de", "Moment mal", cutIn}, {"de", "ja, aber", cutIn}, {"de", "Wann haben Sie geöffnet?", cutIn},
		{"fr", "Oui, d'accord.", backchannel}, {"fr", "je vois", backchannel}, {"fr", "c'est ça", backchannel},
		{"fr", "attendez", cutIn}, {"fr", "oui mais", cutIn}, {"fr", "Combien ça coûte ?", cutIn},
		{"pt-BR", "Tá bom.", backchannel}, {"pt-BR", "uhum", backchannel}, {"pt", "com certeza", backchannel},
		{"pt", "espera", cutIn}, {"pt", "sim, mas", cutIn}, {"pt", "Quanto custa?", cutIn},
		{"it", "Sì, certo.", backchannel}, {"it", "va bene", backchannel}, {"it", "ho capito", backchannel},
		{"it", "aspetta", cutIn}, {"it", "sì ma", cutIn}, {"it", "Quanto costa?", cutIn},
	} {
		if got := rulesFor(tt.lang).judge(tt.text, def, true); got != tt.want {
			t.Errorf("%s judge(%q) = %v, want %v", tt.lang, tt.text, got, tt.want)
		}
	}
	if got := rulesFor("en").judge("ja", def, true); got != cutIn {
		t.Errorf("English judge(ja) = %v, want cut in: the rules follow the language", got)
	}
	for _, tt := range []struct {
		lang, text string
		want       ending
	}{
		{"de", "ich möchte einen Tisch für", unfinished}, {"de", "meine Nummer ist vier eins fünf", unfinished},
		{"de", "wann öffnen Sie morgen", finished}, {"de", "Ich möchte einen Tisch für zwei.", finished},
		{"fr", "je voudrais réserver une table pour", unfinished}, {"fr", "mon numéro est quatre un cinq", unfinished},
		{"fr", "pourquoi fermez-vous si tôt", finished}, {"fr", "une table pour deux", unknownEnd},
		{"pt", "eu queria reservar uma mesa para", unfinished}, {"pt", "meu número é quatro um cinco", unfinished},
		{"pt", "quando vocês abrem amanhã", finished}, {"pt", "uma mesa para dois", unknownEnd},
		{"it", "vorrei prenotare un tavolo per", unfinished}, {"it", "il mio numero è quattro uno cinque", unfinished},
		{"it", "quando aprite domani", finished}, {"it", "un tavolo per due", unknownEnd},
	} {
		if got := rulesFor(tt.lang).ending(tt.text); got != tt.want {
			t.Errorf("%s ending(%q) = %v, want %v", tt.lang, tt.text, got, tt.want)
		}
	}
}

// TestPhrasesFollowTheLanguage: each language with phrases of its own asks whether the
// caller is still there in that language (the tag's region and case aside); a language
// without its own asks in English.
func TestPhrasesFollowTheLanguage(t *testing.T) {
	for lang, want := range map[string]string{"de-AT": "Sind Sie noch da?", "FR": "Êtes-vous toujours là ?",
		"pt-BR": "Ainda está aí?", "it": "È ancora in linea?", "nl": StillThere} {
		if got := phrasesFor(lang).stillThere; got != want {
			t.Errorf("%s asks %q, want %q", lang, got, want)
		}
	}
	for lang, p := range languagePhrases {
		for name, s := range map[string]string{"handOver": p.handOver, "transferFailed": p.transferFailed, "apology": p.apology,
			"missed": p.missed, "filler": p.filler, "stillThere": p.stillThere, "timeUp": p.timeUp} {
			if strings.TrimSpace(s) == "" {
				t.Errorf("%s has no %s phrase: it would say nothing", lang, name)
			}
		}
	}
}
