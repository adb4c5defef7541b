package sip_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	protologger "github.com/livekit/protocol/logger"
	lksdk "github.com/livekit/server-sdk-go/v2"

	"github.com/bridgeline/bridgeline/e2e/harness"
	"github.com/bridgeline/bridgeline/e2e/sipphone"
	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/eventtest"
	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/llm"
	"github.com/bridgeline/bridgeline/mediafleet/llm/llmtest"
	"github.com/bridgeline/bridgeline/mediafleet/resample"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest"
	"github.com/bridgeline/bridgeline/mediafleet/speechtest/sphinx"
	"github.com/bridgeline/bridgeline/mediafleet/tts"
	"github.com/bridgeline/bridgeline/mediafleet/worker"
	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/persona"
)

func TestMain(m *testing.M) {
	lksdk.SetLogger(protologger.GetDiscardLogger())
	code := m.Run()
	if pkg.rig != nil {
		pkg.rig.close()
	}
	os.Exit(code)
}

// pkg is the one stack the package's tests share: the SIP engine is slow to start.
var pkg struct {
	once sync.Once
	rig  *rig
	err  error
}

// rig is the whole stack with LiveKit's SIP bridge, a persona worker on the real speech
// engines and a fake OpenAI-compatible model, and a live key of the stack's account.
type rig struct {
	st      *harness.Stack
	eng     *engines.Engines
	fake    *llmtest.Server
	liveKey string
	close   func()
}

// theRig starts the package's stack on first use (skipped under -short).
func theRig(t testing.TB) *rig {
	t.Helper()
	harness.SkipShort(t)
	pkg.once.Do(func() {
		st, err := harness.New(harness.Options{SIP: true, DispatchTimeout: 20 * time.Second, LocalDelivery: true})
		if err != nil {
			pkg.err = err
			return
		}
		eng, err := engines.FromEnv(os.Getenv, nil)
		if err != nil {
			st.Close()
			pkg.err = err
			return
		}
		fake := llmtest.New(llmtest.Reply{Text: "Sorry?"})
		live, _, err := (&account.Service{Store: st.Store, Now: time.Now}).AddKey(context.Background(), st.AccountID, true)
		if err != nil {
			pkg.err = err
			return
		}
		pkg.rig = &rig{st: st, eng: eng, fake: fake, liveKey: live, close: func() { fake.Close(); st.Close(); eng.Close() }}
	})
	if pkg.err != nil {
		t.Fatal(pkg.err)
	}
	return pkg.rig
}

// worker runs a persona worker answering from the fake model, for the test.
func (r *rig) worker(t testing.TB, mod func(*worker.Config)) {
	t.Helper()
	model, err := llm.New(llm.Config{BaseURL: r.fake.URL(), APIKey: "test-key", Model: "fake-model"})
	if err != nil {
		t.Fatal(err)
	}
	r.st.StartWorker(t, mod, worker.Options{NewVAD: r.eng.NewVAD, Recognizer: r.eng.Recognizer, Voices: r.eng.Voices.Voices(), Model: model})
}

// do sends a request with the account's live key and decodes the answer into out.
func (r *rig) do(t testing.TB, method, path string, body, out any) int {
	t.Helper()
	status, raw, err := r.st.Request(method, path, body, r.liveKey)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && status < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	if status >= 300 {
		t.Logf("%s %s: %d %s", method, path, status, raw)
	}
	return status
}

type trunkObj struct {
	ID             string   `json:"id"`
	Numbers        []string `json:"numbers"`
	OriginationURI string   `json:"origination_uri"`
	Inbound        *struct {
		Username string `json:"username"`
		// Password is shown by the answer that generated it only.
		Password string `json:"password"`
	} `json:"inbound"`
}

// The inbound credentials of the rig's trunks (r.trunk): the provider's, as a customer
// sets them, which the test phones answer the bridge's challenge with unless a test
// gives others.
const (
	providerUser = "e2e-provider"
	providerPass = "e2e-provider-password-0123456789"
)

type lineObj struct {
	ID         string `json:"id"`
	Handle     string `json:"handle"`
	Platform   string `json:"platform"`
	SIPTrunkID string `json:"sip_trunk_id"`
}

type assistantObj struct {
	ID string `json:"id"`
}

// recordObj is the call record as the API shows it.
type recordObj struct {
	ID         string           `json:"id"`
	Direction  string           `json:"direction"`
	Status     string           `json:"status"`
	From       string           `json:"from"`
	To         string           `json:"to"`
	Media      string           `json:"media"`
	Platform   string           `json:"platform"`
	HandledBy  string           `json:"handled_by"`
	SessionID  *string          `json:"session_id"`
	AnsweredAt *string          `json:"answered_at"`
	EndReason  *string          `json:"end_reason"`
	EndedBy    *string          `json:"ended_by"`
	Decision   *string          `json:"decision"`
	Transcript []persona.Turn   `json:"transcript"`
	Metrics    *persona.Metrics `json:"metrics"`
	Report     *string          `json:"assistant_report"`
	Transfer   *struct {
		To      string  `json:"to"`
		Status  string  `json:"status"`
		Failure *string `json:"failure"`
		// ReportedError: LiveKit reported an error for a transfer that went through.
		ReportedError *string `json:"reported_error"`
	} `json:"transfer"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// trunk makes a trunk taking calls from this machine (127.0.0.1) that authenticate as
// providerUser, and dialling outbound
// (when given: a phone's address) over UDP.
func (r *rig) trunk(t testing.TB, outbound string) trunkObj {
	t.Helper()
	body := map[string]any{"name": "test trunk", "inbound": map[string]any{"allowed_addresses": []string{"127.0.0.1"},
		"username": providerUser, "password": providerPass}}
	if outbound != "" {
		body["outbound"] = map[string]any{"address": outbound, "transport": "udp"}
	}
	var tr trunkObj
	harness.Must(t, r.do(t, http.MethodPost, "/v1/sip_trunks", body, &tr), http.StatusCreated, "create trunk")
	return tr
}

// line makes a SIP line for handle on trunk with the given settings.
func (r *rig) line(t testing.TB, handle, trunkID string, settings map[string]any) lineObj {
	t.Helper()
	body := map[string]any{"platform": "sip", "handle": handle, "sip_trunk_id": trunkID}
	for k, v := range settings {
		body[k] = v
	}
	var l lineObj
	harness.Must(t, r.do(t, http.MethodPost, "/v1/lines", body, &l), http.StatusCreated, "create line")
	t.Cleanup(func() {
		harness.WaitFor(t, 30*time.Second, "the line deleted", func() bool {
			status := r.do(t, http.MethodDelete, "/v1/lines/"+l.ID, nil, nil)
			return status == http.StatusOK || status == http.StatusNotFound
		})
	})
	return l
}

// assistant publishes an assistant with greeting.
func (r *rig) assistant(t testing.TB, greeting string, extra map[string]any) assistantObj {
	t.Helper()
	body := map[string]any{"name": "Front desk", "system_prompt": "Answer the phone.", "greeting": greeting, "avatar_id": "ava_theo"}
	for k, v := range extra {
		body[k] = v
	}
	var a assistantObj
	harness.Must(t, r.do(t, http.MethodPost, "/v1/assistants", body, &a), http.StatusCreated, "create assistant")
	harness.Must(t, r.do(t, http.MethodPost, "/v1/assistants/"+a.ID+"/publish", nil, &a), http.StatusCreated, "publish")
	return a
}

// phone starts a baresip phone for the test; its calls authenticate as the rig's
// trunks' provider unless cfg names other credentials (or noAuth).
func (r *rig) phone(t testing.TB, cfg sipphone.Config) *sipphone.Phone {
	t.Helper()
	cfg.Dir = t.TempDir()
	switch {
	case cfg.AuthUser == noAuth:
		cfg.AuthUser, cfg.AuthPassword = "", ""
	case cfg.AuthUser == "":
		cfg.AuthUser, cfg.AuthPassword = providerUser, providerPass
	}
	p, err := sipphone.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("baresip %s log:\n%s\nevents: %+v", cfg.Number, p.Log(), p.Events())
		}
		p.Close()
	})
	return p
}

// noAuth as a phone's AuthUser: the phone answers no challenge.
const noAuth = "-"

// dialURI is a line's number at the bridge.
func (r *rig) dialURI(handle string) string { return "sip:" + handle + "@" + r.st.SIP.SIPAddr() }

// videoURI is where a video phone dials a line: the SIP video bridge.
func (r *rig) videoURI(handle string) string { return "sip:" + handle + "@" + r.st.SIPVideo.SIPAddr() }

// callOf waits for the call record of the line's latest call.
func (r *rig) callOf(t testing.TB, lineID string, cond func(recordObj) bool) recordObj {
	t.Helper()
	var c recordObj
	harness.WaitFor(t, 30*time.Second, "the line's call record", func() bool {
		var list struct {
			Data []recordObj `json:"data"`
		}
		if r.do(t, http.MethodGet, "/v1/calls?line_id="+lineID+"&limit=1", nil, &list) != http.StatusOK || len(list.Data) == 0 {
			return false
		}
		c = list.Data[0]
		return cond == nil || cond(c)
	})
	return c
}

// record reads a call record.
func (r *rig) record(t testing.TB, id string) recordObj {
	t.Helper()
	var c recordObj
	harness.Must(t, r.do(t, http.MethodGet, "/v1/calls/"+id, nil, &c), http.StatusOK, "GET call")
	return c
}

// ended waits for the call's call.ended, exactly once, and returns the record.
func (r *rig) ended(t testing.TB, callID string) (recordObj, callevent.Event) {
	t.Helper()
	harness.WaitFor(t, 30*time.Second, "call.ended", func() bool {
		var list struct {
			Data []struct {
				Data struct {
					CallID string `json:"call_id"`
				} `json:"data"`
			} `json:"data"`
		}
		r.do(t, http.MethodGet, "/v1/events?type=call.ended&limit=100", nil, &list)
		for _, e := range list.Data {
			if e.Data.CallID == callID {
				return true
			}
		}
		return false
	})
	evt := eventtest.ExactlyOnce(t, r.st.Store, r.st.AccountID, callevent.TypeCallEnded, callID)
	return r.record(t, callID), evt
}

// speechWAV writes what a phone says: each part is a sentence (flite's rms voice, which pocketsphinx recognises through 8 kHz) or a
// pause, at the phone's 8 kHz; it returns the file and when each sentence starts and
// ends in it.
type part struct {
	say   string
	pause time.Duration
	beep  time.Duration // a 1 kHz tone this long (a voicemail box's)
}

type spoken struct {
	text       string
	start, end time.Duration // from the start of the file
}

func speechWAV(t testing.TB, parts ...part) (string, []spoken) {
	t.Helper()
	var pcm []int16
	var said []spoken
	at := func() time.Duration { return time.Duration(len(pcm)) * time.Second / sipphone.Rate }
	for _, p := range parts {
		if p.beep > 0 {
			for i := range int(p.beep.Seconds() * sipphone.Rate) {
				pcm = append(pcm, int16(8000*math.Sin(2*math.Pi*1000*float64(i)/sipphone.Rate)))
			}
			continue
		}
		if p.say == "" {
			pcm = append(pcm, make([]int16, int(p.pause.Seconds()*sipphone.Rate))...)
			continue
		}
		wide := speechtest.Flite(t, "rms", p.say)
		narrow, err := resample.Mono(wide, speechtest.Rate, sipphone.Rate)
		if err != nil {
			t.Fatal(err)
		}
		s := spoken{text: p.say, start: at()}
		pcm = append(pcm, narrow...)
		s.end = at()
		said = append(said, s)
	}
	path := filepath.Join(t.TempDir(), "say.wav")
	if err := os.WriteFile(path, tts.EncodeWAV(tts.PCM{Rate: sipphone.Rate, Samples: pcm}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, said
}

// sounds are the stretches of sound in a recording (8 kHz): 20 ms frames louder than
// the threshold, joined across gaps shorter than 600 ms (the pauses between sentences).
type sound struct{ start, end time.Duration }

func sounds(pcm []int16) []sound {
	const frame = sipphone.Rate / 50
	var out []sound
	var cur *sound
	quiet := 0
	for i := 0; i+frame <= len(pcm); i += frame {
		at := time.Duration(i) * time.Second / sipphone.Rate
		loud := speechtest.RMS(pcm[i:i+frame]) > 600
		switch {
		case loud && cur == nil:
			out = append(out, sound{start: at, end: at + 20*time.Millisecond})
			cur, quiet = &out[len(out)-1], 0
		case loud:
			cur.end, quiet = at+20*time.Millisecond, 0
		case cur != nil:
			if quiet++; quiet > 30 {
				cur = nil
			}
		}
	}
	return out
}

// heardSentence recognises which of sentences a stretch of a recording holds ("" none).
func heardSentence(t testing.TB, pcm []int16, s sound, sentences ...string) string {
	t.Helper()
	// The sound's bounds come from a level threshold, which a soft onset ("Hello"'s h)
	// or a fading end can fall below: give the recogniser 200 ms either side. Where the
	// window is cut still sways pocketsphinx's search now and then, so a window that
	// matches no sentence is tried again with 100 and 300 ms margins; the first sentence
	// matched is the answer (a wrong one is as much a failure as none).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got string
	for _, margin := range []int{sipphone.Rate / 5, sipphone.Rate / 10, sipphone.Rate * 3 / 10} {
		from, to := int(s.start.Seconds()*sipphone.Rate), int(s.end.Seconds()*sipphone.Rate)
		from, to = max(from-margin, 0), min(to+margin, len(pcm))
		wide, err := resample.Mono(pcm[from:to], sipphone.Rate, speechtest.Rate)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = sphinx.Choose(ctx, wide, sentences); err != nil {
			t.Fatal(err)
		}
		if got != "" {
			return got
		}
	}
	return got
}

// keepAudio keeps what a phone heard when the test fails, for a person to listen to:
// in $SIP_TEST_KEEP_AUDIO when set (always, then), else in a folder of the system's
// temporary directory that outlives the test; the failure log names the file.
func keepAudio(t testing.TB, name string, pcm []int16) {
	t.Helper()
	dir := os.Getenv("SIP_TEST_KEEP_AUDIO")
	t.Cleanup(func() {
		if dir == "" && !t.Failed() {
			return
		}
		d := dir
		if d == "" {
			var err error
			if d, err = os.MkdirTemp("", "sip-heard-"); err != nil {
				t.Logf("keep %s: %v", name, err)
				return
			}
		} else if err := os.MkdirAll(d, 0o700); err != nil {
			t.Logf("keep %s: %v", name, err)
			return
		}
		path := filepath.Join(d, fmt.Sprintf("%s-%s-%s.wav", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), name, time.Now().Format("150405.000")))
		if err := os.WriteFile(path, tts.EncodeWAV(tts.PCM{Rate: sipphone.Rate, Samples: pcm}), 0o600); err != nil {
			t.Logf("keep %s: %v", name, err)
			return
		}
		t.Logf("what the phone heard (%s, %v at %d Hz): %s", name, time.Duration(len(pcm))*time.Second/sipphone.Rate, sipphone.Rate, path)
	})
}

// bridgeStats is the audio statistics livekit-sip logged for its latest call that ended:
// the room's track coming in (packets, gaps, late ones) and the mixer playing it to the
// phone (late wake-ups as jumps and timing resets, restarts: 60 ms of silence each,
// frames dropped), for a failure message about what the phone heard.
func (r *rig) bridgeStats() string {
	tail := r.st.SIP.LogTail(1 << 20)
	i := strings.LastIndex(tail, `"call statistics"`)
	if i < 0 {
		i = strings.LastIndex(tail, "call statistics")
	}
	if i < 0 {
		return "none logged"
	}
	var out []string
	for _, key := range []string{`"room":{`, `"mixer":{`} {
		if j := strings.Index(tail[i:], key); j >= 0 {
			part := tail[i+j:]
			if k := strings.Index(part, "}"); k >= 0 {
				part = part[:k+1]
			}
			out = append(out, part)
		}
	}
	return strings.Join(out, " ")
}

// levels is a sound's RMS level every 100 ms, for a failure message.
func levels(pcm []int16, s sound) string {
	const step = sipphone.Rate / 10
	var b strings.Builder
	for i := int(s.start.Seconds() * sipphone.Rate); i+step <= len(pcm) && i < int(s.end.Seconds()*sipphone.Rate); i += step {
		fmt.Fprintf(&b, " %.0f", speechtest.RMS(pcm[i:i+step]))
	}
	return strings.TrimSpace(b.String())
}

// words is text as the recogniser spells it.
func words(text string) string { return strings.Join(sphinx.Words(text), " ") }
