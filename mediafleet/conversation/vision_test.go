package conversation_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/conversation"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/speech"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// viewer is a scripted speech.Viewer: each Refresh makes a new camera frame 50 ms
// later, its JPEG the byte of its number (1, 2, ...), as a client answers a key frame
// request.
type viewer struct {
	mu        sync.Mutex
	refreshes int
	latest    *speech.Picture
	// off: the caller shows nothing (camera off), whatever is asked.
	off bool
}

func (v *viewer) Refresh() {
	v.mu.Lock()
	v.refreshes++
	n, off := v.refreshes, v.off
	v.mu.Unlock()
	if off {
		return
	}
	time.AfterFunc(50*time.Millisecond, func() {
		v.mu.Lock()
		v.latest = &speech.Picture{Source: speech.PictureCamera, JPEG: []byte{byte(n)}, At: time.Now()}
		v.mu.Unlock()
	})
}

func (v *viewer) Pictures(ctx context.Context, since time.Time) []speech.Picture {
	for {
		v.mu.Lock()
		p := v.latest
		v.mu.Unlock()
		if p != nil && !p.At.Before(since) {
			return []speech.Picture{*p}
		}
		select {
		case <-ctx.Done():
			if p == nil {
				return nil
			}
			return []speech.Picture{*p}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (v *viewer) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.refreshes
}

// viewLine is the scripted line of a call whose caller's video the model may see.
type viewLine struct {
	*line
	*viewer
}

// dataURL is how picture n reaches the model.
func dataURL(n byte) string {
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString([]byte{n})
}

func startVision(t *testing.T, mode string, v *viewer, texts ...string) *harness {
	t.Helper()
	ver := version
	ver.Vision = mode
	return startOn(t, llmtest.Reply{Text: "It is green."}, nil, &recognizer{texts: texts}, ver,
		func(l *line) speech.Line { return viewLine{line: l, viewer: v} })
}

// images are the image URLs of a request's messages, per message.
func images(req llmtest.Request) [][]string {
	out := make([][]string, len(req.Messages))
	for i, m := range req.Messages {
		out[i] = m.ImageURLs()
	}
	return out
}

// TestVisionSendsTheTurnsFrame: on a version with vision, a fresh frame is asked for at
// the caller's onset and goes to the model with the turn, as an image part of its user
// message; the transcript's caller turn counts it; the look tool is offered. The next
// turn's request carries only its own frame: the first is not sent again.
func TestVisionSendsTheTurnsFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &viewer{}
		h := startVision(t, persona.VisionCamera, v, "what colour is this", "and now")
		h.ask(t, 2)
		reqs := h.srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d model requests, want 1", len(reqs))
		}
		last := reqs[0].Messages[len(reqs[0].Messages)-1]
		if last.Role != "user" || last.Content != "what colour is this" || !slices.Equal(last.ImageURLs(), []string{dataURL(1)}) {
			t.Errorf("the turn's message = %+v (images %v), want its text and the frame asked for at its onset", last, last.ImageURLs())
		}
		if !reqs[0].HasTool(persona.LookTool) {
			t.Error("the look tool is not offered on a version with vision")
		}
		if turns := h.turns(); turns[0].Speaker != "caller" || turns[0].Frames != 1 {
			t.Errorf("transcript %+v, want the caller's turn with one frame", turns)
		}
		h.ask(t, 4)
		reqs = h.srv.Requests()
		got := images(reqs[1])
		want := make([][]string, len(reqs[1].Messages))
		want[len(want)-1] = []string{dataURL(2)}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("second request's images per message %v, want only the new turn's frame %v", got, want)
				break
			}
		}
		if v.count() != 2 {
			t.Errorf("%d frames asked for, want one per caller turn", v.count())
		}
	})
}

// TestVisionOffSendsNoFrame: with vision off, on the same line, no frame is asked for or
// sent, no look tool is offered, and the transcript counts none.
func TestVisionOffSendsNoFrame(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &viewer{}
		h := startVision(t, persona.VisionOff, v, "what colour is this")
		h.ask(t, 2)
		reqs := h.srv.Requests()
		if len(reqs) != 1 || reqs[0].HasTool(persona.LookTool) {
			t.Fatalf("requests %+v, want one without the look tool", reqs)
		}
		for _, m := range reqs[0].Messages {
			if m.Images != "" || m.Parts != 0 {
				t.Errorf("message %+v has content parts with vision off", m)
			}
		}
		if v.count() != 0 || h.turns()[0].Frames != 0 {
			t.Errorf("%d frames asked for, transcript %+v; want none", v.count(), h.turns())
		}
	})
}

// TestNoFrameCostsTheFrameWait: a caller who shows nothing costs each turn the frame
// wait and no more, and the turn goes to the model as text.
func TestNoFrameCostsTheFrameWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &viewer{off: true}
		h := startVision(t, persona.VisionCamera, v, "what colour is this")
		h.ask(t, 2)
		reqs := h.srv.Requests()
		if len(reqs) != 1 || reqs[0].Messages[len(reqs[0].Messages)-1].Parts != 0 || h.turns()[0].Frames != 0 {
			t.Errorf("requests %+v, transcript %+v; want the turn as text without frames", reqs, h.turns())
		}
		answered := eventsOf[speech.Answered](h.state().events)
		if len(answered) != 1 {
			t.Fatalf("%d answers, want 1", len(answered))
		}
		tm := answered[0].Timing
		if d := tm.FirstToken.Sub(tm.Transcribed); d < conversation.DefaultFrameWait || d > conversation.DefaultFrameWait+50*time.Millisecond {
			t.Errorf("the model's first token came %v after the transcript, want the frame wait %v", d, conversation.DefaultFrameWait)
		}
	})
}

// TestLookTool: the model calls look; a fresh frame is asked for, the tool's result says
// the pictures follow, and the next request brings the frame in a user message after
// it. The transcript has the tool turn with its frame; the history the model sees on the
// next turn keeps the note of it but not the picture.
func TestLookTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := &viewer{}
		h := startVision(t, persona.VisionCameraAndScreen, v, "look at this", "thanks")
		h.srv.SetReplies(func(req llmtest.Request) llmtest.Reply {
			for _, m := range req.Messages {
				if m.Role == "tool" {
					return llmtest.Reply{Text: "I see it now."}
				}
			}
			return llmtest.Reply{Text: "Let me look.", ToolCalls: []llmtest.ToolCall{{Name: persona.LookTool, Arguments: "{}"}}}
		})
		h.ask(t, 4)
		reqs := h.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model requests, want 2", len(reqs))
		}
		second := reqs[1].Messages
		n := len(second)
		if n < 4 || second[n-3].ToolCalls != "look({})" || second[n-2].Role != "tool" ||
			!strings.Contains(second[n-2].Content, "follow") || second[n-1].Role != "user" ||
			!slices.Equal(second[n-1].ImageURLs(), []string{dataURL(2)}) {
			t.Fatalf("second request ends %+v, want the look call, its result, and the fresh frame", second)
		}
		if !slices.Equal(second[n-4].ImageURLs(), []string{dataURL(1)}) {
			t.Errorf("the turn's message in the tool round = %+v, want its own frame still with it", second[n-4])
		}
		turns := h.turns()
		i := slices.IndexFunc(turns, func(tn persona.Turn) bool { return tn.Speaker == persona.SpeakerTool })
		if i < 0 || turns[i].Tool.Name != persona.LookTool || turns[i].Frames != 1 || turns[i].Tool.Error != nil {
			t.Fatalf("transcript %+v, want a look tool turn with one frame", turns)
		}
		h.srv.SetReply(llmtest.Reply{Text: "You're welcome."})
		h.ask(t, 6)
		third := h.srv.Requests()[2].Messages
		for i, m := range third[:len(third)-1] {
			if m.Images != "" {
				t.Errorf("third request's message %d %+v carries an older picture", i, m)
			}
		}
		if !slices.ContainsFunc(third, func(m llmtest.Message) bool {
			return m.Role == "user" && strings.Contains(m.Content, "as look showed it")
		}) {
			t.Errorf("third request %+v, want the note of the look's picture in the history", third)
		}
	})
}
