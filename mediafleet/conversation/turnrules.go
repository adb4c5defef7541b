package conversation

import (
	"strings"
	"unicode"

	"github.com/bridgeline/bridgeline/shared/persona"
)

// turnRules are a language's words for taking turns by sense: what acknowledges without
// taking the floor, what asks the assistant to stop, what starts a question, and what a
// sentence does not end on. A recogniser that punctuates says more (a sentence's end, a
// question); these rules are what is left when it does not.
type turnRules struct {
	// acknowledgements are words and phrases that, alone, acknowledge ("uh-huh").
	acknowledgements [][]string
	// stops are words and phrases that ask the assistant to stop ("wait", "hold on").
	stops [][]string
	// questions are the words and phrases a question starts with.
	questions [][]string
	// continuations are words a sentence goes on after: articles, prepositions,
	// conjunctions, possessives, fillers.
	continuations map[string]bool
	// digits are the words of digits read out one by one.
	digits map[string]bool
}

// languageRules are the rule sets by language (BCP-47 primary subtag); a language
// without its own gets English's. Another language is one more entry.
var languageRules = map[string]*turnRules{
	"en": newTurnRules(
		[]string{"uh-huh", "uh huh", "mm-hmm", "mm hmm", "mhm", "mm", "hmm", "hm", "uh", "um", "yeah", "yeah yeah",
			"yes", "yep", "yup", "ya", "right", "okay", "ok", "alright", "all right", "sure", "i see", "got it",
			"cool", "great", "good", "fine", "nice", "true", "exactly", "indeed", "go on", "aha", "ah", "oh", "ooh"},
		[]string{"wait", "stop", "hold on", "hang on", "no", "nope", "sorry", "excuse me", "pardon", "but", "actually",
			"cancel", "one moment", "one second", "just a second", "just a moment", "enough", "shut up", "quiet"},
		"what when where who whom whose why how which can could would will shall should do does did is are was were "+
			"have has may might am isn't aren't don't doesn't didn't won't can't couldn't",
		"a an the to of for in on at by with from into onto about as and or but nor so because if than that "+
			"my your his her our their its this these those some any no every each which who whose "+
			"i i'm i'd i'll we you he she they it's is are was were be been am "+
			"um uh er erm like very really just also plus then and-uh",
		"zero oh one two three four five six seven eight nine double triple",
	),
	// Spanish. A recogniser that punctuates writes "¿" and "?" and the accents that
	// tell "qué" (a question) from "que" (a sentence going on); "si" without its
	// accent acknowledges too, as callers' "sí" is often written so.
	"es": newTurnRules(
		[]string{"sí", "si", "sí sí", "vale", "claro", "claro que sí", "ajá", "aja", "ya", "ya ya", "ya veo", "bueno",
			"de acuerdo", "entiendo", "entendido", "mhm", "mm", "hmm", "eh", "ah", "oh", "ok", "okey", "bien", "muy bien",
			"perfecto", "exacto", "cierto", "correcto", "vale vale", "venga", "genial", "dale", "órale", "ándale", "ah vale", "sí claro"},
		[]string{"espera", "espere", "para", "pare", "no", "pero", "un momento", "un segundo", "momento", "perdón", "perdone",
			"disculpa", "disculpe", "oye", "oiga", "basta", "alto", "cancela", "cancelar", "en realidad", "cállate", "silencio"},
		"qué cuándo dónde adónde quién quiénes cómo cuál cuáles cuánto cuánta cuántos cuántas por_qué para_qué "+
			"puedo puede pueden podría podrían tiene tienen tienes hay sabe sabes está están es_posible me_puede me_podría",
		"el la los las un una unos unas lo al del "+
			"a ante bajo con contra de desde en entre hacia hasta para por según sin sobre tras "+
			"y e o u ni pero sino que porque pues como si aunque cuando donde mientras "+
			"mi mis tu tus su sus nuestro nuestra nuestros nuestras este esta estos estas ese esa "+
			"yo me te se le les nos es son está estoy soy muy más también eh mm",
		"cero uno dos tres cuatro cinco seis siete ocho nueve",
	),
	// German.
	"de": newTurnRules(
		[]string{"ja", "ja ja", "jaja", "jap", "jo", "genau", "okay", "ok", "gut", "alles klar", "klar", "na klar", "richtig",
			"stimmt", "mhm", "hm", "hmm", "aha", "ah", "oh", "ach so", "verstehe", "ich verstehe", "verstanden", "in ordnung",
			"sehr gut", "super", "prima", "natürlich", "sicher", "ja genau", "ja klar", "ja gut"},
		[]string{"warte", "warten sie", "moment", "einen moment", "moment mal", "stopp", "stop", "halt", "nein", "aber",
			"entschuldigung", "hören sie", "hör mal", "eigentlich", "abbrechen", "sekunde", "eine sekunde", "ruhe"},
		"was wann wo wohin woher wer wen wem wessen wie welche welcher welches warum wieso weshalb wozu wie_viel "+
			"kann können könnten könnte haben habt hast hat gibt_es ist sind darf dürfen muss müssen soll sollte",
		"der die das den dem des ein eine einen einem einer eines "+
			"an auf aus bei bis durch für gegen hinter in im ins mit nach neben ohne seit über um unter von vom vor "+
			"während wegen zu zum zur zwischen und oder aber denn sondern dass weil wenn ob als damit obwohl "+
			"mein meine meinen meinem meiner dein deine sein seine ihr ihre unser unsere euer eure "+
			"ich wir du er sehr ganz auch noch äh ähm öh also",
		"null eins zwei drei vier fünf sechs sieben acht neun",
	),
	// French. A recogniser that punctuates writes the elisions ("j'aimerais") as one word.
	"fr": newTurnRules(
		[]string{"oui", "oui oui", "ouais", "d'accord", "ok", "okay", "ok d'accord", "bien", "très bien", "entendu",
			"je vois", "ah", "oh", "mhm", "hm", "hmm", "exactement", "exact", "voilà", "bien sûr", "c'est ça", "parfait",
			"super", "ça marche", "tout à fait", "effectivement", "ah bon", "ah oui", "oui bien sûr"},
		[]string{"attendez", "attends", "arrêtez", "arrête", "stop", "non", "mais", "un instant", "une seconde",
			"un moment", "pardon", "excusez-moi", "excuse-moi", "en fait", "annuler", "silence"},
		"qu'est-ce quoi quand où qui comment combien pourquoi quel quelle quels quelles est-ce "+
			"pouvez-vous pourriez-vous puis-je avez-vous y_a-t-il vous_avez",
		"le la les un une des du de au aux à en dans par pour sur sous avec sans chez vers entre "+
			"et ou mais donc car que qui dont si comme quand lorsque parce "+
			"mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet cette ces "+
			"je tu il elle nous on très aussi euh ben",
		"zéro un deux trois quatre cinq six sept huit neuf",
	),
	// Portuguese. "para" is left to the sentence rules: it is "for" far more often than
	// "stop" (which callers say as "pare").
	"pt": newTurnRules(
		[]string{"sim", "sim sim", "tá", "tá bom", "está bem", "ok", "okay", "certo", "claro", "beleza", "entendi",
			"entendo", "ah", "oh", "uhum", "hum", "aham", "pois", "pois é", "exato", "isso", "isso mesmo", "perfeito",
			"ótimo", "combinado", "com certeza", "de acordo", "tudo bem", "legal", "sim claro"},
		[]string{"espera", "espere", "pare", "não", "mas", "um momento", "um segundo", "momento", "desculpa",
			"desculpe", "com licença", "na verdade", "cancela", "cancelar", "chega", "silêncio"},
		"que o_que quando onde quem como qual quais quanto quanta quantos quantas por_que "+
			"pode podem poderia tem têm há está é_possível você_pode",
		"o a os as um uma uns umas do da dos das no na nos nas ao aos pelo pela "+
			"de em por para com sem sobre entre até e ou mas que porque pois como se quando onde "+
			"meu minha meus minhas seu sua seus suas nosso nossa este esta estes estas esse essa "+
			"eu você ele ela nós muito mais também hum",
		"zero um dois três quatro cinco seis sete oito nove",
	),
	// Italian.
	"it": newTurnRules(
		[]string{"sì", "si", "sì sì", "va bene", "ok", "okay", "certo", "certamente", "esatto", "giusto", "capito",
			"ho capito", "ah", "oh", "mhm", "hm", "hmm", "perfetto", "benissimo", "bene", "d'accordo", "chiaro", "infatti",
			"ecco", "già", "sicuro", "come no", "sì certo"},
		[]string{"aspetta", "aspetti", "fermo", "ferma", "stop", "basta", "no", "ma", "un momento", "un attimo",
			"un secondo", "scusa", "scusi", "mi scusi", "in realtà", "annulla", "silenzio"},
		"che cosa quando dove chi come quale quali quanto quanta quanti quante perché "+
			"può possono potrebbe potrei posso ha hanno avete c'è ci_sono è_possibile mi_può",
		"il lo la i gli le un uno una del dello della dei degli delle al allo alla ai agli alle dal nel nella sul sulla "+
			"di a da in con su per tra fra e o ma però che perché se come quando mentre "+
			"mio mia miei mie tuo tua suo sua nostro nostra vostro questo questa quello quella "+
			"io tu lui lei noi voi molto più anche ehm eh cioè",
		"zero uno due tre quattro cinque sei sette otto nove",
	),
}

// newTurnRules makes a language's rule set. questions, continuations and digits are
// words separated by spaces; "_" joins the words of a phrase ("por_qué").
func newTurnRules(acks, stops []string, questions, continuations, digits string) *turnRules {
	r := &turnRules{continuations: set(continuations), digits: set(digits)}
	for _, a := range acks {
		r.acknowledgements = append(r.acknowledgements, tokens(a))
	}
	for _, s := range stops {
		r.stops = append(r.stops, tokens(s))
	}
	for _, q := range strings.Fields(questions) {
		r.questions = append(r.questions, tokens(strings.ReplaceAll(q, "_", " ")))
	}
	return r
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// rulesFor is the rule set of a BCP-47 language ("" and unknown ones: English).
func rulesFor(language string) *turnRules {
	primary, _, _ := strings.Cut(strings.ToLower(language), "-")
	if r, ok := languageRules[primary]; ok {
		return r
	}
	return languageRules["en"]
}

// tokens are text's words, lower case, without the punctuation around them ("Uh-huh,"
// is "uh-huh"; "don't" stays).
func tokens(text string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ToLower(text)) {
		f = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// verdict is what words over the assistant are.
type verdict int

const (
	undecided   verdict = iota // no words yet
	backchannel                // an acknowledgement: the reply goes on
	cutIn                      // the caller takes the floor: the reply is cut
)

// maxBackchannel is the most words an acknowledgement has ("yeah yeah okay sure").
const maxBackchannel = 4

// interruptRule is a version's Interruption as the session applies it.
type interruptRule struct {
	off      bool
	minWords int
	extra    [][]string // the version's own acknowledgements
}

func newInterruptRule(in *persona.Interruption) interruptRule {
	r := interruptRule{minWords: 1}
	if in == nil {
		return r
	}
	r.off = in.Mode == persona.InterruptionOff
	if in.MinWords > 0 {
		r.minWords = in.MinWords
	}
	for _, a := range in.Acknowledgements {
		if t := tokens(a); len(t) > 0 {
			r.extra = append(r.extra, t)
		}
	}
	return r
}

// judge says what the caller's words over the assistant are: a stop word or a question
// cut in; so do minWords words that are not acknowledgements, or more words than an
// acknowledgement has; acknowledgements alone (and fewer than minWords other words)
// are a backchannel.
//
// final says text is the turn's final words. Of interim words, the last is the
// recogniser's guess so far ("the" becomes "yeah", "I" becomes "I see", the "oh" of
// "okay" is "no" a moment later): it counts at once only when it acknowledges, and
// otherwise once another word follows it or the turn's final words have it. Holding a
// lone "no" or "what" costs nothing the caller hears: the assistant is paused already.
func (r *turnRules) judge(text string, in interruptRule, final bool) verdict {
	ws := tokens(text)
	if len(ws) == 0 {
		return undecided
	}
	trimmed := strings.TrimSpace(text)
	q := matchAt(ws, 0, r.questions)
	if strings.HasPrefix(trimmed, "¿") {
		q = max(q, 1) // Spanish opens a question with its mark
	}
	if strings.HasSuffix(trimmed, "?") || (q > 0 && (final || len(ws) > q)) {
		return cutIn
	}
	other, provisional := 0, false
	for i := 0; i < len(ws); {
		if n := matchAt(ws, i, r.stops); n > 0 {
			if final || i+n < len(ws) {
				return cutIn
			}
			provisional = true
			break
		}
		n := max(matchAt(ws, i, r.acknowledgements), matchAt(ws, i, in.extra))
		if n == 0 && !final && i == len(ws)-1 {
			provisional = true
			break
		}
		if n == 0 {
			other++
			n = 1
		}
		i += n
	}
	if provisional && other < in.minWords {
		return undecided
	}
	if other >= in.minWords || len(ws) > maxBackchannel+in.minWords-1 {
		return cutIn
	}
	return backchannel
}

// matchAt is the length of the longest phrase of phrases at ws[i:], 0 for none.
func matchAt(ws []string, i int, phrases [][]string) int {
	best := 0
	for _, p := range phrases {
		if len(p) > best && i+len(p) <= len(ws) && equal(ws[i:i+len(p)], p) {
			best = len(p)
		}
	}
	return best
}

// prefixOf says whether ws is a proper prefix of one of phrases.
func prefixOf(ws []string, phrases [][]string) bool {
	for _, p := range phrases {
		if len(ws) < len(p) && equal(ws, p[:len(ws)]) {
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// ending is how the caller's words so far end.
type ending int

const (
	unknownEnd ending = iota // no words, or nothing telling: the fixed silence
	finished                 // a sentence or question is complete: a short silence
	unfinished               // mid-phrase, or digits being read out: a longer one
)

// ending says how text, the caller's words so far, ends. The recogniser's punctuation
// decides where it has any (a comma or dash goes on, a full stop or question mark
// ends), except for digits read out, which go on in groups; without punctuation, the
// last word does (an article, preposition or conjunction goes on) and a question that
// ends on a word a sentence may end on is finished.
func (r *turnRules) ending(text string) ending {
	text = strings.TrimSpace(text)
	ws := tokens(text)
	if len(ws) == 0 {
		return unknownEnd
	}
	if r.readingDigits(ws) {
		return unfinished
	}
	last := text[len(text)-1]
	switch last {
	case '.', '!', '?':
		if strings.HasSuffix(text, "...") {
			return unfinished
		}
		return finished
	case ',', ';', ':', '-':
		return unfinished
	}
	if r.continuations[ws[len(ws)-1]] {
		return unfinished
	}
	if len(ws) >= 3 && matchAt(ws, 0, r.questions) > 0 {
		return finished
	}
	return unknownEnd
}

// readingDigits says whether ws ends with digits read out: two or more digit words or
// digits in a row ("four one five", "415").
func (r *turnRules) readingDigits(ws []string) bool {
	n := 0
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		switch {
		case r.digits[w]:
			n++
		case isDigits(w):
			n += len(w)
		default:
			return n >= 2
		}
		if n >= 2 && i == 0 {
			return true
		}
	}
	return n >= 2
}

func isDigits(w string) bool {
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return w != ""
}
