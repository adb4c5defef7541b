package sessions_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/color"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/mediafleet/callerbot"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// TestVisionWebCall is a web call from a Go client (server-sdk-go, as callerbot joins)
// whose camera shows one solid colour (VP8, as a browser sends it), to an assistant on
// the real speech engines whose version has vision camera on a model the deployment says
// accepts images. The caller asks a question; the fake OpenAI-compatible model receives
// the turn with an image part, a JPEG data URL whose centre pixel is the camera's
// colour; the caller hears the model's answer; the record's caller turn counts the frame.
// The same call to the assistant republished with vision off sends the model no image.
func TestVisionWebCall(t *testing.T) {
	st := tenant(t)
	eng := realEngines(t)
	const answer = "You are holding up something green."
	fake := llmtest.New(llmtest.Reply{Text: answer})
	t.Cleanup(fake.Close)
	model, err := llm.New(llm.Config{BaseURL: fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	st.StartWorker(t, nil, worker.Options{NewVAD: eng.NewVAD, Recognizer: eng.Recognizer, Voices: eng.Voices.Voices(), Model: model})
	green := color.RGBA{R: 0x20, G: 0xc0, B: 0x40, A: 0xff}

	var a assistantObj
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants", map[string]any{"name": "Seer", "system_prompt": "Say what the caller shows you.",
		"greeting": "Hello, show me something.", "avatar_id": "ava_iris", "vision": "camera"}, &a), http.StatusCreated, "create assistant")
	// Vision on the deployment's default model cannot be published: the control plane
	// cannot vouch that it sees.
	var refused struct {
		Error struct{ Code, Param string } `json:"error"`
	}
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &refused), http.StatusBadRequest, "publish vision without a model")
	if refused.Error.Code != "model_lacks_vision" || refused.Error.Param != "model" {
		t.Errorf("publish with vision and no model refused with %+v, want model_lacks_vision on model", refused.Error)
	}
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/assistants/"+a.ID, map[string]any{"model": "gpt-4o-mini"}, nil), http.StatusOK, "name a model that sees")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")

	turns, reqs := visionCall(t, st, fake, a.ID, green)
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	urls := last.ImageURLs()
	if last.Role != "user" || last.Parts != 2 || len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/jpeg;base64,") {
		t.Fatalf("the turn's message = %+v (%d parts), want its text and one JPEG image part", last, last.Parts)
	}
	jpg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(urls[0], "data:image/jpeg;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatalf("the image part is not a JPEG: %v", err)
	}
	b := img.Bounds()
	centre := img.At(b.Min.X+b.Dx()/2, b.Min.Y+b.Dy()/2)
	r, g, bl, _ := centre.RGBA()
	t.Logf("image part: %d bytes, %v, centre %d,%d,%d", len(jpg), b.Size(), r>>8, g>>8, bl>>8)
	near := func(x uint32, y uint8) bool { d := int(x>>8) - int(y); return d >= -24 && d <= 24 }
	if b.Dx() != 320 || b.Dy() != 180 || !near(r, green.R) || !near(g, green.G) || !near(bl, green.B) {
		t.Errorf("the image is %v with centre %v, want the camera's 320x180 of %v", b.Size(), centre, green)
	}
	if !reqs[0].HasTool("look") {
		t.Error("the look tool is not offered to a vision version's model")
	}
	if turns[1].Speaker != persona.SpeakerCaller || turns[1].Frames != 1 || turns[2].Text != answer {
		t.Errorf("transcript %+v, want the caller's turn with one frame, then the answer", turns)
	}

	// Vision off: the same call sends no image and offers no look.
	harness.Must(t, st.Do(t, http.MethodPatch, "/v1/assistants/"+a.ID, map[string]any{"vision": "off"}, nil), http.StatusOK, "vision off")
	harness.Must(t, st.Do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish vision off")
	turns, reqs = visionCall(t, st, fake, a.ID, green)
	for _, m := range reqs[0].Messages {
		if m.Parts != 0 || m.Images != "" {
			t.Errorf("with vision off the model got message %+v with content parts", m)
		}
	}
	if reqs[0].HasTool("look") || turns[1].Frames != 0 {
		t.Errorf("with vision off: look offered %v, caller turn %+v; want neither", reqs[0].HasTool("look"), turns[1])
	}
}

// visionCall is one web call to assistant asstID from a caller whose camera shows c: it
// asks a question once greeted, hears the answer, and hangs up. It returns the record's
// transcript and the model's requests of the call.
func visionCall(t *testing.T, st *harness.Stack, fake *llmtest.Server, asstID string, c color.RGBA) ([]persona.Turn, []llmtest.Request) {
	t.Helper()
	before := len(fake.Requests())
	ses := createWebCall(t, st, map[string]any{"mode": "assistant", "assistant_id": asstID, "media": "video"})
	silence := callerbot.Silence()
	ctx := context.Background()
	bot, err := callerbot.Join(ctx, callerbot.Options{URL: ses.RTCURL, Token: ses.ParticipantToken, Audio: &silence, Video: true, VideoColor: &c})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Leave()
	joined := time.Now()
	harness.WaitFor(t, 15*time.Second, "the greeting", func() bool { _, ok := bot.SoundAfter("", joined); return ok })
	greeted, _ := bot.SoundAfter("", joined)
	waitQuietBot(t, bot, greeted.Start, "the greeting")

	asked, reply := askBot(ctx, t, bot, qOpen)
	t.Logf("end of the question to first reply audio: %v", reply.Start.Sub(asked.End).Round(time.Millisecond))
	waitQuietBot(t, bot, reply.Start, "the reply")
	reqs := fake.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("the model got %d requests in the call, want 1: %+v", len(reqs), reqs)
	}

	bot.Leave()
	waitEvent(t, st, callevent.TypeCallEnded, ses.CallID)
	rec := webRecordOf(t, st, ses.CallID)
	if len(rec.Turns) < 3 {
		t.Fatalf("transcript %+v, want the greeting, the question and the answer", rec.Turns)
	}
	return rec.Turns, reqs
}
