package conversation

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
)

// Greeting is a call's greeting on its line: the first thing the caller hears once media
// is verified. To the conversation that follows it is speech in progress like a reply:
// the caller's speech over it pauses it, a cough resumes it, a barge-in cuts it.
type Greeting struct {
	line speech.Line
	said speech.Said
}

// Greet queues the greeting, text spoken as pcm, on line.
func Greet(line speech.Line, text string, pcm tts.PCM) (*Greeting, error) {
	pb, err := line.Speak(pcm)
	if err != nil {
		return nil, err
	}
	line.Publish(speech.Used{TTSCharacters: utf8.RuneCountInString(text)})
	return &Greeting{line: line, said: speech.Said{Text: text, Playback: pb}}, nil
}

// Follow follows the greeting as it plays: started is told when its first frame went
// out, its words are published then and, final, when it has played, was cut or the call
// ended, as far as the caller heard them. It returns then, or when ctx ends before any of
// it played.
func (g *Greeting) Follow(ctx context.Context, started func(at time.Time)) {
	pb := g.said.Playback
	select {
	case <-pb.Started():
	case <-pb.Done():
	case <-ctx.Done():
	}
	select {
	case <-pb.Started():
	default:
		return // it never played
	}
	at := pb.Progress().Start
	if started != nil {
		started(at)
	}
	g.line.Publish(speech.Words{Speaker: speech.Assistant, Text: g.said.Text, Start: at})
	<-pb.Done() // the line ends every playback when the call ends
	w, _, _ := speech.HeardWords([]speech.Said{g.said})
	w.Final, w.Interrupted = true, pb.Progress().Cut
	g.line.Publish(w)
}
