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
	"de": {
		handOver:       "Einen Moment bitte, ich verbinde Sie.",
		transferFailed: "Es tut mir leid, ich konnte Ihren Anruf nicht weiterleiten. Kann ich Ihnen sonst helfen?",
		apology:        "Entschuldigung, da ist etwas schiefgegangen. Können Sie das wiederholen?",
		missed:         "Entschuldigung, das habe ich nicht verstanden. Können Sie das wiederholen?",
		filler:         "Einen Moment.",
		stillThere:     "Sind Sie noch da?",
		timeUp:         "Es tut mir leid, die Zeit für diesen Anruf ist abgelaufen. Danke für Ihren Anruf. Auf Wiederhören.",
	},
	"fr": {
		handOver:       "Un instant, s'il vous plaît. Je vous transfère.",
		transferFailed: "Toutes mes excuses, le transfert de votre appel n'a pas abouti. Puis-je vous aider autrement ?",
		apology:        "Pardon, j'ai eu un problème. Pouvez-vous répéter ?",
		missed:         "Pardon, je n'ai pas compris. Pouvez-vous répéter ?",
		filler:         "Un instant.",
		stillThere:     "Êtes-vous toujours là ?",
		timeUp:         "Toutes mes excuses, cet appel a atteint sa durée maximale. Merci de votre appel. Au revoir.",
	},
	"pt": {
		handOver:       "Um momento, por favor. Vou transferir a sua chamada.",
		transferFailed: "Desculpe, não consegui transferir a sua chamada. Posso ajudar em mais alguma coisa?",
		apology:        "Desculpe, tive um problema. Pode repetir?",
		missed:         "Desculpe, não entendi. Pode repetir?",
		filler:         "Um momento.",
		stillThere:     "Ainda está aí?",
		timeUp:         "Desculpe, chegamos ao limite de tempo desta chamada. Agradecemos a sua ligação. Tchau.",
	},
	"it": {
		handOver:       "Un attimo, per favore. Le passo la chiamata.",
		transferFailed: "Mi dispiace, non è stato possibile trasferire la chiamata. Posso aiutarla in altro?",
		apology:        "Mi scusi, ho avuto un problema. Può ripetere?",
		missed:         "Mi scusi, non ho capito. Può ripetere?",
		filler:         "Un attimo.",
		stillThere:     "È ancora in linea?",
		timeUp:         "Mi dispiace, abbiamo raggiunto il limite di tempo di questa chiamata. Grazie per aver chiamato. Arrivederci.",
	},
}

// phrasesFor is the phrases of a BCP-47 language ("" and unknown ones: English).
func phrasesFor(language string) phrases {
	if p, ok := languagePhrases[persona.PrimaryLanguage(language)]; ok {
		return p
	}
	return languagePhrases["en"]
}
