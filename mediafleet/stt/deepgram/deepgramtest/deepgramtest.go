// Package deepgramtest is a fake of Deepgram's live transcription API for tests and
// benchmarks: a WebSocket server on 127.0.0.1 (or on in-memory pipes: NewPiped) that
// speaks the real protocol at /v1/listen: the Authorization header and the query
// parameters checked as Deepgram checks them, linear16 audio frames in, Results messages
// out (interim ones as audio arrives; a final one marked from_finalize a configurable
// delay after each Finalize, of the audio since the previous final result: a stream may
// be finalised several times and goes on after each), KeepAlive, CloseStream (a final Metadata message, then a
// normal close), and the 10 s idle timeout (close 1011, NET-0001). Its words come from a
// script (the texts the test says the caller speaks, one per stretch of speech), or from
// a function of the audio. It can drop every connection and refuse new ones, and it
// records what each connection received.
package deepgramtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bridgeline/bridgeline/mediafleet/internal/pipenet"
)

// Rate is the only sample rate the fake takes (the persona worker's).
const Rate = 16000

// speechLevel is the loudness above which the script's words are "heard": a stretch of
// audio with a sample louder than this holds speech.
const speechLevel = 300

// Config is the fake's behaviour. Change it under SetConfig while connections are open.
type Config struct {
	// Key is the API key it accepts ("Authorization: Token <key>"); empty accepts no
	// header only.
	Key string
	// FinalizeDelay is how long after a Finalize the final result is sent: the fake's
	// own time to the final text.
	FinalizeDelay time.Duration
	// InterimEvery sends an interim result each time this much more audio arrived (0:
	// none, as with interim_results=false).
	InterimEvery time.Duration
	// Endpointing, when set, finalises a stretch of speech on its own once this much
	// silence followed it (is_final and speech_final, not from_finalize), as Deepgram's
	// endpointing does; 0 finalises only at Finalize and CloseStream.
	Endpointing time.Duration
	// IdleTimeout closes a stream that got neither audio nor KeepAlive for this long
	// (default 10 s, Deepgram's).
	IdleTimeout time.Duration
	// Words turns a stretch of audio into its words: final is false for an interim
	// result. Nil uses the script (Script).
	Words func(audio []int16, final bool) string
	// Down refuses new connections with 503.
	Down bool
	// Languages, when set, are the only language query parameters the fake hears: a
	// stream asking for another is refused 400, as Deepgram refuses a language its
	// model does not have. Empty: any.
	Languages []string
}

// Received is what one connection got.
type Received struct {
	Query                         map[string]string
	Auth                          string
	Samples                       int // audio received, in samples
	Finalizes, KeepAlives, Closes int // control messages
	Opened, Closed                time.Time
	FinalizedAt, FinalSent        []time.Time // each Finalize received; its final result sent
}

// Server is the fake. Close it when done.
type Server struct {
	url    string
	dialer *websocket.Dialer
	stop   func()

	mu      sync.Mutex
	cfg     Config
	script  []string
	conns   []*stream
	closed  bool
	upgrade websocket.Upgrader
}

// New starts the fake on 127.0.0.1.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.url, s.dialer = srv.URL, &websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	s.stop = func() {
		srv.CloseClientConnections()
		srv.Close()
	}
	return s
}

// NewPiped is New serving over in-memory connections (net.Pipe), for tests on a
// simulated clock (testing/synctest), where a goroutine waiting on a socket would keep
// the clock from advancing. Only Dialer reaches it. Make it and Close it inside the
// test's bubble.
func NewPiped(cfg Config) *Server {
	s := &Server{cfg: cfg}
	l := pipenet.New("deepgramtest")
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	s.url = "http://deepgramtest.invalid"
	s.dialer = &websocket.Dialer{NetDialContext: l.Dial, HandshakeTimeout: 5 * time.Second}
	s.stop = func() {
		srv.Close()
		<-served
	}
	return s
}

// URL is the base URL a client is configured with (DEEPGRAM_BASE_URL).
func (s *Server) URL() string { return s.url }

// Dialer reaches the server (the only one that reaches a piped server).
func (s *Server) Dialer() *websocket.Dialer { return s.dialer }

// Close drops every connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := append([]*stream(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
	s.stop()
	for _, c := range conns {
		<-c.done
	}
}

// SetConfig changes the behaviour for what comes next.
func (s *Server) SetConfig(f func(*Config)) {
	s.mu.Lock()
	f(&s.cfg)
	s.mu.Unlock()
}

// Script queues the words of the caller's next stretches of speech, one text each.
func (s *Server) Script(texts ...string) {
	s.mu.Lock()
	s.script = append(s.script, texts...)
	s.mu.Unlock()
}

// DropAll closes every open connection at once, without a close message, as a broken
// network does.
func (s *Server) DropAll() {
	s.mu.Lock()
	conns := append([]*stream(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.UnderlyingConn().Close()
	}
}

// Received lists what each connection got, in the order they opened.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.conns))
	for i, c := range s.conns {
		out[i] = c.rec
		out[i].FinalizedAt = append([]time.Time(nil), c.rec.FinalizedAt...)
		out[i].FinalSent = append([]time.Time(nil), c.rec.FinalSent...)
	}
	return out
}

// words is the script's Words: the next scripted text for a stretch that holds speech
// (taken when final); for an interim result, its first words, three a second of audio.
func (s *Server) words(audio []int16, final bool) string {
	if !hasSpeech(audio) {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		return ""
	}
	text := s.script[0]
	if final {
		s.script = s.script[1:]
		return text
	}
	w := strings.Fields(text)
	n := min(len(w), max(1, len(audio)*3/Rate))
	return strings.Join(w[:n], " ")
}

// endpoint reports whether audio holds speech followed by at least silence samples of
// quiet.
func endpoint(audio []int16, silence int) bool {
	if len(audio) < silence || hasSpeech(audio[len(audio)-silence:]) {
		return false
	}
	return hasSpeech(audio[:len(audio)-silence])
}

func hasSpeech(audio []int16) bool {
	for _, v := range audio {
		if v > speechLevel || v < -speechLevel {
			return true
		}
	}
	return false
}

// serve checks a request as Deepgram does, then runs its stream.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	fail := func(status int, code, msg string) {
		w.Header().Set("dg-error", msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"err_code":%q,"err_msg":%q}`, code, msg)
	}
	switch {
	case r.URL.Path != "/v1/listen":
		fail(http.StatusNotFound, "NOT_FOUND", "no such path")
		return
	case cfg.Down:
		fail(http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE", "the service is down")
		return
	case r.Header.Get("Authorization") != authFor(cfg.Key):
		fail(http.StatusUnauthorized, "INVALID_AUTH", "invalid credentials")
		return
	}
	q := r.URL.Query()
	switch {
	case q.Get("encoding") != "linear16":
		fail(http.StatusBadRequest, "Bad Request", "this fake takes encoding=linear16 only")
		return
	case q.Get("sample_rate") != fmt.Sprint(Rate):
		fail(http.StatusBadRequest, "Bad Request", fmt.Sprintf("this fake takes sample_rate=%d only", Rate))
		return
	case q.Get("channels") != "" && q.Get("channels") != "1":
		fail(http.StatusBadRequest, "Bad Request", "this fake takes one channel")
		return
	case len(cfg.Languages) > 0 && !slices.Contains(cfg.Languages, q.Get("language")):
		fail(http.StatusBadRequest, "Bad Request", "No such model/language/tier combination found.")
		return
	}
	ws, err := s.upgrade.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	st := &stream{s: s, ws: ws, quit: make(chan struct{}), done: make(chan struct{}), interim: q.Get("interim_results") == "true"}
	st.rec = Received{Query: map[string]string{}, Auth: r.Header.Get("Authorization"), Opened: time.Now()}
	for k := range q {
		st.rec.Query[k] = q.Get(k)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.conns = append(s.conns, st)
	s.mu.Unlock()
	st.run()
}

func authFor(key string) string {
	if key == "" {
		return ""
	}
	return "Token " + key
}

// stream is one connection.
type stream struct {
	s       *Server
	ws      *websocket.Conn
	quit    chan struct{} // the connection is over: delayed results are not sent
	done    chan struct{}
	interim bool

	wmu sync.Mutex // one writer at a time
	// Guarded by s.mu.
	rec          Received
	pending      []int16 // audio since the last final result
	pendingFrom  int     // its start in the stream, in samples
	sinceInterim int
	closing      bool
}

func (st *stream) run() {
	var timers sync.WaitGroup
	defer func() {
		close(st.quit)
		st.ws.Close()
		timers.Wait()
		close(st.done)
	}()
	for {
		st.s.mu.Lock()
		idle := st.s.cfg.IdleTimeout
		st.s.mu.Unlock()
		if idle <= 0 {
			idle = 10 * time.Second
		}
		st.ws.SetReadDeadline(time.Now().Add(idle))
		kind, b, err := st.ws.ReadMessage()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				st.closeWith(websocket.FormatCloseMessage(1011, "Deepgram did not receive audio data or a text message within the timeout window. See https://dpgr.am/net0001"))
			}
			st.s.mu.Lock()
			st.rec.Closed = time.Now()
			st.s.mu.Unlock()
			return
		}
		switch kind {
		case websocket.BinaryMessage:
			st.audio(b)
		case websocket.TextMessage:
			var m struct{ Type string }
			if json.Unmarshal(b, &m) != nil {
				st.closeWith(websocket.FormatCloseMessage(1008, "DATA-0000: the text message is not JSON"))
				return
			}
			switch m.Type {
			case "KeepAlive":
				st.s.mu.Lock()
				st.rec.KeepAlives++
				st.s.mu.Unlock()
			case "Finalize":
				st.finalize(&timers)
			case "CloseStream":
				st.closeStream()
				return
			default:
				st.closeWith(websocket.FormatCloseMessage(1008, "DATA-0000: unknown message type "+m.Type))
				return
			}
		}
	}
}

// audio takes a linear16 frame, and sends an interim result when enough came.
func (st *stream) audio(b []byte) {
	pcm := make([]int16, len(b)/2)
	for i := range pcm {
		pcm[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	s := st.s
	s.mu.Lock()
	st.rec.Samples += len(pcm)
	st.pending = append(st.pending, pcm...)
	st.sinceInterim += len(pcm)
	every := int(s.cfg.InterimEvery.Seconds() * Rate)
	send := st.interim && every > 0 && st.sinceInterim >= every
	var msg []byte
	if ep := int(s.cfg.Endpointing.Seconds() * Rate); ep > 0 && endpoint(st.pending, ep) {
		audio, from, words := st.pending, st.pendingFrom, s.wordsFunc()
		st.pendingFrom += len(audio)
		st.pending, st.sinceInterim = nil, 0
		s.mu.Unlock()
		st.write(websocket.TextMessage, results(from, len(audio), words(audio, true), true, false))
		return
	}
	if send {
		st.sinceInterim = 0
		audio := append([]int16(nil), st.pending...)
		from, words := st.pendingFrom, s.wordsFunc()
		s.mu.Unlock()
		msg = results(from, len(audio), words(audio, false), false, false)
	} else {
		s.mu.Unlock()
	}
	if msg != nil {
		st.write(websocket.TextMessage, msg)
	}
}

func (s *Server) wordsFunc() func([]int16, bool) string {
	if s.cfg.Words != nil {
		return s.cfg.Words
	}
	return s.words
}

// finalize answers a Finalize after the configured delay with the final result of the
// audio since the last final result (the previous Finalize's, or the endpointing's):
// is_final and from_finalize, not speech_final, which Deepgram sets only when its
// endpointing heard the speech end. The stream goes on: audio after it is transcribed
// as before. With no audio pending there is nothing to answer (Deepgram does not
// promise a from_finalize result then).
func (st *stream) finalize(timers *sync.WaitGroup) {
	s := st.s
	s.mu.Lock()
	st.rec.Finalizes++
	st.rec.FinalizedAt = append(st.rec.FinalizedAt, time.Now())
	delay := s.cfg.FinalizeDelay
	audio, from := st.pending, st.pendingFrom
	st.pendingFrom += len(audio)
	st.pending, st.sinceInterim = nil, 0
	words := s.wordsFunc()
	s.mu.Unlock()
	if len(audio) == 0 {
		return
	}
	text := words(audio, true)
	msg := results(from, len(audio), text, true, true)
	timers.Add(1)
	go func() {
		defer timers.Done()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-st.quit:
				t.Stop()
				return
			}
		}
		if st.write(websocket.TextMessage, msg) == nil {
			s.mu.Lock()
			st.rec.FinalSent = append(st.rec.FinalSent, time.Now())
			s.mu.Unlock()
		}
	}()
}

// closeStream finishes the stream as Deepgram does on CloseStream: the final result of
// what is pending, the Metadata message, a normal close.
func (st *stream) closeStream() {
	s := st.s
	s.mu.Lock()
	st.rec.Closes++
	audio, from := st.pending, st.pendingFrom
	total := st.rec.Samples
	st.pending = nil
	words := s.wordsFunc()
	s.mu.Unlock()
	if len(audio) > 0 {
		st.write(websocket.TextMessage, results(from, len(audio), words(audio, true), true, false))
	}
	meta, _ := json.Marshal(map[string]any{"type": "Metadata", "transaction_key": "deprecated", "request_id": "fake-request",
		"created": time.Now().UTC().Format(time.RFC3339Nano), "duration": float64(total) / Rate, "channels": 1})
	st.write(websocket.TextMessage, meta)
	st.closeWith(websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	s.mu.Lock()
	st.rec.Closed = time.Now()
	s.mu.Unlock()
}

func (st *stream) write(kind int, b []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return st.ws.WriteMessage(kind, b)
}

func (st *stream) closeWith(msg []byte) {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	st.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}

// results is a Results message for samples [from, from+n) of the stream.
func results(from, n int, text string, final, fromFinalize bool) []byte {
	round := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	start, dur := round(float64(from)/Rate), round(float64(n)/Rate)
	words := []map[string]any{}
	if w := strings.Fields(text); len(w) > 0 {
		step := dur / float64(len(w))
		for i, word := range w {
			words = append(words, map[string]any{"word": strings.ToLower(strings.Trim(word, ".,?!")), "punctuated_word": word,
				"start": round(start + float64(i)*step), "end": round(start + float64(i+1)*step), "confidence": 0.99})
		}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "Results", "channel_index": []int{0, 1}, "start": start, "duration": dur,
		"is_final": final, "speech_final": final && !fromFinalize, "from_finalize": fromFinalize,
		"channel":  map[string]any{"alternatives": []any{map[string]any{"transcript": text, "confidence": 0.99, "words": words}}},
		"metadata": map[string]any{"request_id": "fake-request", "model_uuid": "fake-model", "model_info": map[string]any{"name": "fake", "version": "0", "arch": "fake"}},
	})
	return b
}
