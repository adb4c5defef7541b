// Package deepgram is a streaming speech.Recognizer that speaks Deepgram's live
// transcription API: one WebSocket per call to {BaseURL}/v1/listen, the caller's audio
// sent as linear16 frames while they speak, interim and final results coming back, a
// Finalize message at the conversation's end of turn (and one earlier in the caller's
// pause when the conversation flushes: speech.Flusher), KeepAlive messages between turns
// and CloseStream when the call ends. Any server that speaks the same protocol
// (Deepgram's self-hosted API, compatible servers) works through BaseURL.
//
// A call's connection outlives its turns. When it drops, the transcriber dials again
// (with backoff) and sends again the audio of the open turn that no final result
// covers yet, so the turn loses nothing. When the service cannot be reached, or does not
// answer a turn's Finalize in time, the turn's audio, which the transcriber keeps, goes
// to Config.Fallback (pocketsphinx on the persona worker); without one, End fails and
// the conversation apologises.
//
// Only linear16 is sent: the conversation hands the recogniser 16 kHz PCM (decoded from
// the caller's Opus), and encoding it again as Opus would cost CPU per caller to save
// bandwidth (256 kbit/s while the caller speaks, nothing between turns).
package deepgram

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// Defaults.
const (
	DefaultBaseURL = "wss://api.deepgram.com"
	DefaultModel   = "nova-3"
	// DefaultLanguage is Deepgram's language tag for English.
	DefaultLanguage = "en"
	// DefaultFinalizeTimeout bounds the wait for the final result of a turn after
	// Finalize. Deepgram answers a Finalize with a result marked from_finalize "in most
	// cases", not always (its documentation: not when little audio is left to process),
	// so past this the turn's final results and its latest interim words are the text.
	DefaultFinalizeTimeout = 500 * time.Millisecond
	// DefaultKeepAlive is how long the socket may go without audio before a KeepAlive is
	// sent. Deepgram closes a stream that gets neither audio nor KeepAlive for 10 s
	// (NET-0001) and asks for one every 3 to 5 s.
	DefaultKeepAlive = 4 * time.Second
	// DefaultDialTimeout bounds a connection attempt (TCP, TLS and the WebSocket
	// handshake).
	DefaultDialTimeout = 5 * time.Second
)

// Config configures the recogniser.
type Config struct {
	// APIKey is sent as "Authorization: Token <key>" (DEEPGRAM_API_KEY). Required with the
	// default BaseURL; a self-hosted server may need none.
	APIKey string
	// BaseURL is the server, ws(s):// or http(s):// (DEEPGRAM_BASE_URL); default
	// DefaultBaseURL. The path /v1/listen is added.
	BaseURL string
	// Model and Language are the model and language query parameters (DEEPGRAM_MODEL,
	// DEEPGRAM_LANGUAGE); defaults DefaultModel and DefaultLanguage.
	Model, Language string
	// Query holds further query parameters sent as they are (DEEPGRAM_QUERY, e.g.
	// "smart_format=true&keyterm=Bridgeline"); it may not set the parameters the client
	// owns (encoding, sample_rate, channels, interim_results). Without punctuate or
	// smart_format in it, the client asks for punctuate=true: the conversation ends a
	// turn sooner after a full stop or question mark (end of turn by words).
	Query url.Values
	// FinalizeTimeout, KeepAlive and DialTimeout default to the constants above.
	FinalizeTimeout time.Duration
	KeepAlive       time.Duration
	DialTimeout     time.Duration
	// Fallback transcribes a turn the service could not (down, or silent past
	// FinalizeTimeout on a broken connection). Nil: End returns the error. It hears
	// English (pocketsphinx): a call in another language (NewTranscriberIn) goes
	// without it, as an apology is better than words of the wrong language.
	Fallback speech.Recognizer
	// Dialer makes the connections; nil uses one with DialTimeout as its handshake
	// timeout. Tests set one that dials in-memory pipes.
	Dialer *websocket.Dialer
	Log    *slog.Logger
}

// owned are the query parameters the client sets itself.
var owned = []string{"encoding", "sample_rate", "channels", "interim_results", "model", "language"}

// Recognizer is the deployment's Deepgram recogniser: it makes one streaming
// transcriber per call.
type Recognizer struct {
	cfg    Config
	listen string // the WebSocket URL with its query
	header http.Header
}

var (
	_ speech.Recognizer   = (*Recognizer)(nil)
	_ speech.Multilingual = (*Recognizer)(nil)
	_ speech.Flusher      = (*transcriber)(nil)
	_ speech.Interimer    = (*transcriber)(nil)
)

// New checks cfg and fills its defaults.
func New(cfg Config) (*Recognizer, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
		if cfg.APIKey == "" {
			return nil, errors.New("deepgram: DEEPGRAM_API_KEY is required for Deepgram's API (a self-hosted server set with DEEPGRAM_BASE_URL may need none)")
		}
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("deepgram: DEEPGRAM_BASE_URL %q is not a URL", cfg.BaseURL)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return nil, fmt.Errorf("deepgram: DEEPGRAM_BASE_URL %q: want ws, wss, http or https", cfg.BaseURL)
	}
	for _, k := range owned {
		if cfg.Query.Has(k) {
			return nil, fmt.Errorf("deepgram: DEEPGRAM_QUERY may not set %s (the client sets it)", k)
		}
	}
	def := func(d *time.Duration, v time.Duration, name string) error {
		if *d < 0 {
			return fmt.Errorf("deepgram: %s %v is negative", name, *d)
		}
		if *d == 0 {
			*d = v
		}
		return nil
	}
	for _, e := range []error{
		def(&cfg.FinalizeTimeout, DefaultFinalizeTimeout, "finalize timeout"),
		def(&cfg.KeepAlive, DefaultKeepAlive, "keep-alive interval"),
		def(&cfg.DialTimeout, DefaultDialTimeout, "dial timeout"),
	} {
		if e != nil {
			return nil, e
		}
	}
	if cfg.KeepAlive >= 10*time.Second {
		return nil, fmt.Errorf("deepgram: keep-alive interval %v: Deepgram closes a stream idle for 10 s", cfg.KeepAlive)
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Language == "" {
		cfg.Language = DefaultLanguage
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &websocket.Dialer{HandshakeTimeout: cfg.DialTimeout, Proxy: http.ProxyFromEnvironment}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	q := url.Values{}
	for k, vs := range cfg.Query {
		q[k] = append([]string(nil), vs...)
	}
	q.Set("encoding", "linear16")
	q.Set("sample_rate", strconv.Itoa(speech.Rate))
	q.Set("channels", "1")
	q.Set("interim_results", "true")
	if q.Get("punctuate") == "" && q.Get("smart_format") == "" {
		q.Set("punctuate", "true")
	}
	q.Set("model", cfg.Model)
	q.Set("language", cfg.Language)
	u.Path = strings.TrimRight(u.Path, "/") + "/v1/listen"
	u.RawQuery = q.Encode()
	h := http.Header{}
	if cfg.APIKey != "" {
		h.Set("Authorization", "Token "+cfg.APIKey)
	}
	return &Recognizer{cfg: cfg, listen: u.String(), header: h}, nil
}

// URL is the address a call's transcriber connects to (without the key).
func (r *Recognizer) URL() string { return r.listen }

// Close has nothing to free: each transcriber closes its own connection.
func (r *Recognizer) Close() error { return nil }

// NewTranscriber starts a call's transcriber in the configured language, which connects
// at once and keeps its connection until Close. A service that cannot be reached does
// not fail the call: the transcriber keeps dialling, and meanwhile turns go to the
// fallback.
func (r *Recognizer) NewTranscriber(ctx context.Context) (speech.Transcriber, error) {
	return r.NewTranscriberIn(ctx, "")
}

// NewTranscriberIn is NewTranscriber for a call in language, a BCP-47 tag sent as the
// language query parameter (Language).
func (r *Recognizer) NewTranscriberIn(ctx context.Context, language string) (speech.Transcriber, error) {
	language = r.Language(language)
	u, err := url.Parse(r.listen)
	if err != nil {
		return nil, fmt.Errorf("deepgram: %w", err)
	}
	q := u.Query()
	q.Set("language", language)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &transcriber{r: r, log: r.cfg.Log.With("language", language), ctx: ctx, cancel: cancel, listen: u.String(),
		fallback: r.cfg.Fallback != nil && primaryLanguage(language) == DefaultLanguage,
		wake:     make(chan struct{}, 1), done: make(chan struct{})}
	go t.run()
	return t, nil
}

// Language is the language parameter of a call in language: the configured one
// (DEEPGRAM_LANGUAGE) for "" and for the bare primary language of it ("en" when
// en-GB is configured: the deployment's own variant), else language itself.
func (r *Recognizer) Language(language string) string {
	if language == "" || (!strings.Contains(language, "-") && primaryLanguage(r.cfg.Language) == strings.ToLower(language)) {
		return r.cfg.Language
	}
	return language
}

// primaryLanguage is a BCP-47 tag's primary language, lower case.
func primaryLanguage(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	return strings.ToLower(p)
}

// transcriber is one call's stream. The conversation calls Begin, Write, End, Abort and
// Interim from its goroutine; run owns the connection (dialling, every write to it) and
// a reader goroutine per connection takes its results. mu guards the rest.
type transcriber struct {
	r      *Recognizer
	listen string // r's URL with the call's language
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{} // run has something to send
	done   chan struct{} // run returned

	mu sync.Mutex
	// The open turn: its audio (all of it: kept for a reconnect and for the fallback),
	// the final results so far and how many samples of the turn they cover, and the
	// latest interim words after them.
	inTurn   bool
	turn     int // counts turns, so a connection knows which one its offsets are for
	audio    []int16
	finals   []string
	finalEnd int
	interim  string
	// interimEnd is where the interim words' audio ends, in samples of the turn: a final
	// result of earlier audio (a Flush's, answered late) does not drop them.
	interimEnd int
	// flushTo: Flush asked for a Finalize once this much of the turn's audio is out (0:
	// none asked).
	flushTo int
	// finalizing: End asked for the turn's final result; finalized is closed when it came.
	finalizing bool
	finalized  chan struct{}
	conn       *conn // nil while down
	dialErr    error // the last attempt's failure while down
	closing    bool
	// fallback: the call may fall back on Config.Fallback (its language is English);
	// fallbackTr is its transcriber, made on first use.
	fallback   bool
	fallbackTr speech.Transcriber
}

// conn is one WebSocket connection and where the open turn stands on it.
type conn struct {
	ws   *websocket.Conn
	dead chan struct{} // closed when its reader stops
	// sent counts the samples sent on this connection: the stream's clock, in which
	// Deepgram's start and duration are given. A sample of stream time s is sample
	// s-base of the turn the connection carries (turn).
	sent, base, turn int
	// turnSent is how much of that turn's audio went out; finalizedTo, how much of it
	// the connection's latest Finalize (or the final results the connection started
	// after) covers, and prevFinalizedTo the one before; answered, whether a result
	// marked from_finalize came for the latest: one whose audio ends past the one
	// before (the service answers in order, so the earlier ones are answered, or never
	// will be).
	turnSent                     int
	finalizedTo, prevFinalizedTo int
	answered                     bool
	// flush: an earlier turn's audio went out without its Finalize.
	flush     bool
	lastWrite time.Time
}

func (t *transcriber) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Begin opens a turn.
func (t *transcriber) Begin() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return errors.New("deepgram: Begin after Close")
	}
	t.startTurn(true)
	return nil
}

// startTurn forgets the open turn, and opens the next one when open is set; t.mu held.
func (t *transcriber) startTurn(open bool) {
	if c := t.conn; c != nil {
		// Audio of the last turn that neither a Finalize nor the service's own final
		// results covered (an aborted turn) is flushed before the next turn's, so no
		// result mixes the two.
		covered := c.turn == t.turn && t.finalEnd >= c.turnSent-tolerance
		uncovered := c.turnSent > c.finalizedTo && !covered
		c.flush = c.flush || uncovered
	}
	t.inTurn = open
	t.turn++
	t.audio = t.audio[:0]
	t.finals, t.finalEnd, t.interim, t.interimEnd, t.flushTo = nil, 0, "", 0, 0
	t.finalizing, t.finalized = false, make(chan struct{})
	if c := t.conn; c != nil {
		// The turn starts here in the stream: whatever comes back for earlier audio is
		// the previous turn's.
		c.turn, c.base, c.turnSent = t.turn, c.sent, 0
		c.finalizedTo, c.prevFinalizedTo, c.answered = 0, 0, false
	}
}

// Write adds audio to the open turn; run sends it.
func (t *transcriber) Write(pcm []int16) error {
	t.mu.Lock()
	if !t.inTurn {
		t.mu.Unlock()
		return errors.New("deepgram: Write outside a turn")
	}
	t.audio = append(t.audio, pcm...)
	t.mu.Unlock()
	t.poke()
	return nil
}

// Flush has run send Finalize once the turn's audio written so far is out: the service
// finishes those words now, while the caller's pause goes on. The turn stays open; End
// then sends Finalize only for audio written after it, and waits only for what is still
// to come.
func (t *transcriber) Flush() error {
	t.mu.Lock()
	if !t.inTurn {
		t.mu.Unlock()
		return errors.New("deepgram: Flush outside a turn")
	}
	t.flushTo = len(t.audio)
	t.mu.Unlock()
	t.poke()
	return nil
}

// Interim is the open turn's words so far: its final results, then the latest interim
// ones.
func (t *transcriber) Interim() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.textLocked(true)
}

func (t *transcriber) textLocked(withInterim bool) string {
	words := append([]string(nil), t.finals...)
	if withInterim && t.interim != "" {
		words = append(words, t.interim)
	}
	return strings.Join(strings.Fields(strings.Join(words, " ")), " ")
}

// Abort drops the open turn; what the service still says about it is ignored.
func (t *transcriber) Abort() {
	t.mu.Lock()
	t.startTurn(false)
	t.mu.Unlock()
}

// End sends Finalize once the turn's audio is out (unless a Flush's Finalize already
// followed all of it) and waits for the turn's final words: the answer (marked
// from_finalize) to the turn's latest Finalize on the connection, or final results that
// cover all the audio sent. Past
// FinalizeTimeout the final results so far and the latest interim words are the text,
// when the service had all the turn's audio on a connection still up; otherwise the
// turn goes to the fallback.
func (t *transcriber) End(ctx context.Context) (string, error) {
	t.mu.Lock()
	if !t.inTurn {
		t.mu.Unlock()
		return "", errors.New("deepgram: End outside a turn")
	}
	if len(t.audio) == 0 {
		t.startTurn(false)
		t.mu.Unlock()
		return "", nil
	}
	t.finalizing = true
	t.checkFinalLocked()
	finalized, down := t.finalized, t.conn == nil && t.dialErr != nil
	t.mu.Unlock()
	var waitErr error
	if !down {
		t.poke()
		timer := time.NewTimer(t.r.cfg.FinalizeTimeout)
		select {
		case <-finalized:
		case <-timer.C:
		case <-ctx.Done():
			waitErr = ctx.Err()
		}
		timer.Stop()
	}

	t.mu.Lock()
	confirmed := isClosed(finalized)
	heard := t.conn != nil && t.conn.turn == t.turn && t.conn.turnSent == len(t.audio)
	text := t.textLocked(!confirmed)
	audio := append([]int16(nil), t.audio...)
	dialErr := t.dialErr
	t.startTurn(false)
	t.mu.Unlock()
	switch {
	case confirmed:
		return text, nil
	case waitErr != nil:
		return "", fmt.Errorf("deepgram: %w", waitErr)
	case heard:
		t.log.Warn("deepgram: no final result within the finalize timeout; taking the words so far", "timeout", t.r.cfg.FinalizeTimeout)
		return text, nil
	}
	why := errors.New("the service did not get the turn")
	if dialErr != nil {
		why = dialErr
	}
	return t.fallBack(ctx, audio, why)
}

// fallBack transcribes the turn's audio with the fallback recogniser.
func (t *transcriber) fallBack(ctx context.Context, audio []int16, why error) (string, error) {
	if !t.fallback {
		return "", fmt.Errorf("deepgram: %w", why)
	}
	t.log.Warn("deepgram: turn transcribed by the fallback", "err", why)
	if t.fallbackTr == nil {
		fb, err := t.r.cfg.Fallback.NewTranscriber(t.ctx)
		if err != nil {
			return "", fmt.Errorf("deepgram: %v; fallback: %w", why, err)
		}
		t.fallbackTr = fb
	}
	if err := t.fallbackTr.Begin(); err != nil {
		return "", fmt.Errorf("deepgram: %v; fallback: %w", why, err)
	}
	if err := t.fallbackTr.Write(audio); err != nil {
		t.fallbackTr.Abort()
		return "", fmt.Errorf("deepgram: %v; fallback: %w", why, err)
	}
	text, err := t.fallbackTr.End(ctx)
	if err != nil {
		return "", fmt.Errorf("deepgram: %v; fallback: %w", why, err)
	}
	return text, nil
}

// Close ends the stream (CloseStream) and the connection, and waits for the
// transcriber's goroutines.
func (t *transcriber) Close() error {
	t.mu.Lock()
	t.closing = true
	t.startTurn(false)
	fb := t.fallbackTr
	t.mu.Unlock()
	t.poke()
	select {
	case <-t.done:
	case <-time.After(2 * time.Second):
		t.cancel()
		<-t.done
	}
	t.cancel()
	if fb != nil {
		return fb.Close()
	}
	return nil
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// run keeps the connection up and does every write to it: the open turn's audio, its
// Finalize, KeepAlive in silences, CloseStream at the end.
func (t *transcriber) run() {
	defer close(t.done)
	closing := func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.closing || t.ctx.Err() != nil
	}
	backoff := time.Duration(0)
	for {
		if closing() {
			return
		}
		if backoff > 0 {
			retry := time.NewTimer(backoff)
		wait:
			for {
				select {
				case <-retry.C:
					break wait
				case <-t.wake: // a turn's audio waits for the connection; Close does not
					if closing() {
						retry.Stop()
						return
					}
				case <-t.ctx.Done():
					retry.Stop()
					return
				}
			}
		}
		c, err := t.dial()
		if err != nil {
			t.mu.Lock()
			first := t.dialErr == nil
			t.dialErr = err
			t.mu.Unlock()
			if first {
				t.log.Warn("deepgram: cannot connect; turns go to the fallback until it can", "err", err)
			}
			backoff = min(max(2*backoff, 250*time.Millisecond), 5*time.Second)
			continue
		}
		backoff = 0
		if t.serve(c) {
			return
		}
		// Dropped: dial again at once, then back off.
		backoff = 0
	}
}

// dial connects and makes the connection current: the open turn's audio that no final
// result covers is sent again on it.
func (t *transcriber) dial() (*conn, error) {
	ctx, cancel := context.WithTimeout(t.ctx, t.r.cfg.DialTimeout)
	defer cancel()
	ws, resp, err := t.r.cfg.Dialer.DialContext(ctx, t.listen, t.r.header)
	if err != nil {
		if resp != nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
			resp.Body.Close()
			return nil, fmt.Errorf("connect: %s: %s %s", resp.Status, strings.TrimSpace(resp.Header.Get("dg-error")), strings.TrimSpace(string(b)))
		}
		return nil, fmt.Errorf("connect: %w", err)
	}
	c := &conn{ws: ws, dead: make(chan struct{}), lastWrite: time.Now()}
	t.mu.Lock()
	if t.dialErr != nil {
		t.log.Info("deepgram: connected again")
	}
	t.dialErr = nil
	resend := min(t.finalEnd, len(t.audio))
	// The final results cover the audio before resend: a Flush asked for later audio
	// gets its Finalize again on this connection.
	c.turn, c.base, c.turnSent, c.finalizedTo, c.prevFinalizedTo = t.turn, -resend, resend, resend, resend
	t.interim, t.interimEnd = "", 0 // the audio after the finals is transcribed again on this connection
	t.conn = c
	t.mu.Unlock()
	go t.read(c)
	return c, nil
}

// serve writes to c until it drops (false) or the transcriber closes (true).
func (t *transcriber) serve(c *conn) bool {
	keepAlive := time.NewTicker(t.r.cfg.KeepAlive / 4)
	defer keepAlive.Stop()
	for {
		closing, err := t.flush(c)
		if err == nil && closing {
			t.closeStream(c)
			return true
		}
		if err != nil {
			t.drop(c, err)
			return false
		}
		select {
		case <-t.wake:
		case <-keepAlive.C:
		case <-c.dead:
			t.drop(c, errors.New("connection closed"))
			return false
		case <-t.ctx.Done():
			c.ws.Close()
			<-c.dead
			return true
		}
	}
}

var (
	finalizeMsg    = []byte(`{"type":"Finalize"}`)
	keepAliveMsg   = []byte(`{"type":"KeepAlive"}`)
	closeStreamMsg = []byte(`{"type":"CloseStream"}`)
)

// flush sends what is pending on c: the open turn's new audio, then a Finalize once all
// of it is out when End or a Flush asked for one that no earlier Finalize covers; a
// KeepAlive when nothing went out for a while.
func (t *transcriber) flush(c *conn) (closing bool, err error) {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return true, nil
	}
	flushed := c.flush
	c.flush = false
	var audio []byte
	if t.inTurn && c.turn == t.turn && c.turnSent < len(t.audio) {
		pending := t.audio[c.turnSent:]
		audio = make([]byte, 2*len(pending))
		for i, v := range pending {
			binary.LittleEndian.PutUint16(audio[2*i:], uint16(v))
		}
		c.turnSent += len(pending)
		c.sent += len(pending)
	}
	finalize := t.inTurn && c.turn == t.turn && c.turnSent == len(t.audio) && c.finalizedTo < c.turnSent &&
		(t.finalizing || t.flushTo > c.finalizedTo)
	if finalize {
		c.prevFinalizedTo, c.finalizedTo, c.answered = c.finalizedTo, c.turnSent, false
	}
	idle := time.Since(c.lastWrite) >= t.r.cfg.KeepAlive
	t.mu.Unlock()

	if flushed {
		if err := c.ws.WriteMessage(websocket.TextMessage, finalizeMsg); err != nil {
			return false, err
		}
		c.lastWrite = time.Now()
	}
	if len(audio) > 0 {
		if err := c.ws.WriteMessage(websocket.BinaryMessage, audio); err != nil {
			return false, err
		}
		c.lastWrite = time.Now()
	}
	if finalize {
		if err := c.ws.WriteMessage(websocket.TextMessage, finalizeMsg); err != nil {
			return false, err
		}
		c.lastWrite = time.Now()
	}
	if len(audio) == 0 && !finalize && !flushed && idle {
		if err := c.ws.WriteMessage(websocket.TextMessage, keepAliveMsg); err != nil {
			return false, err
		}
		c.lastWrite = time.Now()
	}
	return false, nil
}

// closeStream tells the service the stream is over and waits a moment for it to close
// the connection (it sends its Metadata first).
func (t *transcriber) closeStream(c *conn) {
	if err := c.ws.WriteMessage(websocket.TextMessage, closeStreamMsg); err == nil {
		select {
		case <-c.dead:
		case <-time.After(time.Second):
		case <-t.ctx.Done():
		}
	}
	c.ws.Close()
	<-c.dead
	t.mu.Lock()
	if t.conn == c {
		t.conn = nil
	}
	t.mu.Unlock()
}

// drop forgets a connection that failed.
func (t *transcriber) drop(c *conn, err error) {
	c.ws.Close()
	<-c.dead
	t.mu.Lock()
	if t.conn == c {
		t.conn = nil
	}
	closing := t.closing
	t.mu.Unlock()
	if !closing {
		t.log.Warn("deepgram: connection lost; reconnecting", "err", err)
	}
}

// message is what the service sends: Results, Metadata, UtteranceEnd, SpeechStarted or
// an error.
type message struct {
	Type         string  `json:"type"`
	Start        float64 `json:"start"`
	Duration     float64 `json:"duration"`
	IsFinal      bool    `json:"is_final"`
	SpeechFinal  bool    `json:"speech_final"`
	FromFinalize bool    `json:"from_finalize"`
	Channel      struct {
		Alternatives []struct {
			Transcript string `json:"transcript"`
		} `json:"alternatives"`
	} `json:"channel"`
	// Errors.
	Description string `json:"description"`
	Message     string `json:"message"`
	ErrCode     string `json:"err_code"`
}

// read takes c's messages until it closes.
func (t *transcriber) read(c *conn) {
	defer close(c.dead)
	for {
		kind, b, err := c.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code != websocket.CloseNormalClosure {
				t.log.Warn("deepgram: the service closed the stream", "code", ce.Code, "reason", ce.Text)
			}
			return
		}
		if kind != websocket.TextMessage {
			continue
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			t.log.Warn("deepgram: unreadable message", "err", err)
			continue
		}
		switch m.Type {
		case "Results":
			t.result(c, m)
		case "Metadata", "UtteranceEnd", "SpeechStarted":
		case "Error":
			t.log.Warn("deepgram: error", "code", m.ErrCode, "description", m.Description, "message", m.Message)
		}
	}
}

// tolerance is how near the end of the audio sent a final result must reach to cover
// it (Deepgram's times are seconds with a few decimals).
const tolerance = speech.Rate / 100 // 10 ms

// result takes a Results message of c.
func (t *transcriber) result(c *conn, m message) {
	toSamples := func(s float64) int { return int(math.Round(s * speech.Rate)) }
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.conn != c || !t.inTurn || c.turn != t.turn {
		return // a connection given up, or a turn that is over
	}
	start, end := toSamples(m.Start)-c.base, toSamples(m.Start+m.Duration)-c.base
	if start < -tolerance {
		return // audio of an earlier turn
	}
	text := ""
	if len(m.Channel.Alternatives) > 0 {
		text = strings.TrimSpace(m.Channel.Alternatives[0].Transcript)
	}
	if !m.IsFinal {
		t.interim, t.interimEnd = text, end
		return
	}
	if text != "" {
		t.finals = append(t.finals, text)
	}
	t.finalEnd = max(t.finalEnd, end)
	if end >= t.interimEnd-tolerance {
		t.interim = ""
	}
	if m.FromFinalize && end > c.prevFinalizedTo+tolerance {
		c.answered = true
	}
	t.checkFinalLocked()
}

// checkFinalLocked ends End's wait for the turn's final words once they are all in:
// every sample of the turn went out and either final results cover it all, or the
// connection's latest Finalize followed all of it and was answered; t.mu held.
func (t *transcriber) checkFinalLocked() {
	c := t.conn
	if !t.finalizing || c == nil || c.turn != t.turn || c.turnSent < len(t.audio) || len(t.audio) == 0 {
		return
	}
	if t.finalEnd >= len(t.audio)-tolerance || (c.finalizedTo == len(t.audio) && c.answered) {
		close(t.finalized)
		t.finalizing = false
	}
}
