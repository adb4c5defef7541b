package conversation

import "github.com/bridgeline/bridgeline/shared/persona"

// phrases are what the assistant says of its own, not the model's words, in one
// language: English's are the exported constants.
type phrases struct {
	handOver, transferFailed, apology, missed, filler, stillThere, timeUp string
}

// languagePhrases are the phrases by language (BCP-47 primary subtag); a language
// without its own says English's.
var languagePhrases = map[string]phrases{
	"en": {handOver: HandOver, transferFailed: TransferFailed, apology: Apology, missed: Missed, filler: Filler,
		stillThere: StillThere, timeUp: TimeUp},
	"es": {
		handOver:       "Un momento, por favor. Le paso la llamada.",
		transferFailed: "Lo siento, no he podido transferir su llamada. ¿Puedo ayudarle en algo más?",
		apology:        "Perdone, he tenido un problema. ¿Puede repetirlo?",
		missed:         "Perdone, no le he entendido. ¿Puede repetirlo?",
		filler:         "Un momento.",
		stillThere:     "¿Sigue ahí?",
		timeUp:         "Lo siento, hemos llegado al límite de tiempo de esta llamada. Gracias por llamar. Adiós.",
	},
}

// phrasesFor is the phrases of a BCP-47 language ("" and unknown ones: English).
func phrasesFor(language string) phrases {
	if p, ok := languagePhrases[persona.PrimaryLanguage(language)]; ok {
		return p
	}
	return languagePhrases["en"]
}
