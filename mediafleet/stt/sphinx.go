package stt

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pocketsphinx.h>
#include <sphinxbase/err.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/cmn.h>

// bl_ps_new makes a decoder from command-line style arguments (cmd_ln_init is variadic,
// which cgo cannot call). The decoder keeps its own reference to the configuration.
static ps_decoder_t *bl_ps_new(int argc, char **argv) {
	cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, TRUE);
	if (config == NULL) {
		return NULL;
	}
	ps_decoder_t *ps = ps_init(config);
	cmd_ln_free_r(config);
	return ps;
}

static void bl_quiet(void) { err_set_logfp(NULL); }

// Streamed audio switches pocketsphinx to live cepstral mean normalisation: each
// utterance is normalised by the mean its decoder carried out of the utterances before
// it. bl_cmn_veclen, bl_cmn_save and bl_cmn_load read and set that state (the mean, and
// the running sum and frame count it is updated from) so that it can follow a call
// rather than a decoder.
static int bl_cmn_veclen(ps_decoder_t *ps) {
	feat_t *f = ps_get_feat(ps);
	return (f != NULL && f->cmn_struct != NULL) ? f->cmn_struct->veclen : 0;
}

static void bl_cmn_save(ps_decoder_t *ps, mfcc_t *mean, mfcc_t *sum, int32 *nframe) {
	cmn_t *c = ps_get_feat(ps)->cmn_struct;
	memcpy(mean, c->cmn_mean, c->veclen * sizeof(mfcc_t));
	memcpy(sum, c->sum, c->veclen * sizeof(mfcc_t));
	*nframe = c->nframe;
}

// bl_cmn_update sets the mean to the frames' so far (cmn_live_update), as this
// version does only at an utterance's end.
static void bl_cmn_update(ps_decoder_t *ps) { cmn_live_update(ps_get_feat(ps)->cmn_struct); }

static void bl_cmn_load(ps_decoder_t *ps, const mfcc_t *mean, const mfcc_t *sum, int32 nframe) {
	cmn_t *c = ps_get_feat(ps)->cmn_struct;
	memcpy(c->cmn_mean, mean, c->veclen * sizeof(mfcc_t));
	memcpy(c->sum, sum, c->veclen * sizeof(mfcc_t));
	c->nframe = nframe;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/bridgeline/bridgeline/mediafleet/speech"
)

// DefaultModelDir is the US English model of the Debian package pocketsphinx-en-us.
const DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"

// SphinxConfig configures the local recogniser.
type SphinxConfig struct {
	// ModelDir holds en-us/ (the acoustic model), en-us.lm.bin and cmudict-en-us.dict.
	ModelDir string
	// Decoders is how many decoders are made at start (each ~100 MB and ~0.5 s to make);
	// more are made if more turns than that are being transcribed at once.
	Decoders int
	// Args are more pocketsphinx arguments ("-name", "value", ...); one naming an
	// argument NewSphinx sets replaces its default.
	Args []string
	// Logger reports decoders made on demand; slog.Default when nil.
	Logger *slog.Logger
}

// SphinxConfigFromEnv reads POCKETSPHINX_MODEL_DIR (default DefaultModelDir) and
// PERSONA_STT_DECODERS (default 2) through getenv (os.Getenv in main).
func SphinxConfigFromEnv(getenv func(string) string) (SphinxConfig, error) {
	c := SphinxConfig{ModelDir: getenv("POCKETSPHINX_MODEL_DIR")}
	if s := getenv("PERSONA_STT_DECODERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("stt: PERSONA_STT_DECODERS=%q: want a positive number", s)
		}
		c.Decoders = n
	}
	return c, nil
}

// Sphinx is the local recogniser: pocketsphinx (libpocketsphinx, the Debian 0.8 API)
// with a pool of decoders made when the worker starts. A decoder serves one turn at a
// time and goes back to the pool when the turn ends, so it is reused across a call's
// turns and across calls; the audio is decoded as it is written, so End only finishes
// the search.
type Sphinx struct {
	argv []*C.char
	log  *slog.Logger
	// fresh is a new decoder's cepstral mean state (the model's -cmninit): where each
	// call's starts.
	fresh cmnState

	mu     sync.Mutex
	idle   []*C.ps_decoder_t
	all    []*C.ps_decoder_t
	closed bool
}

var _ speech.Recognizer = (*Sphinx)(nil)

// makeMu serialises decoder creation: sphinxbase's logging and its feature tables are
// process-wide.
var makeMu sync.Mutex

// NewSphinx loads the model into cfg.Decoders decoders.
func NewSphinx(cfg SphinxConfig) (*Sphinx, error) {
	if cfg.ModelDir == "" {
		cfg.ModelDir = DefaultModelDir
	}
	if cfg.Decoders <= 0 {
		cfg.Decoders = 2
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	paths := map[string]string{
		"-hmm":  filepath.Join(cfg.ModelDir, "en-us"),
		"-lm":   filepath.Join(cfg.ModelDir, "en-us.lm.bin"),
		"-dict": filepath.Join(cfg.ModelDir, "cmudict-en-us.dict"),
	}
	args := []string{"pocketsphinx"}
	for _, k := range []string{"-hmm", "-lm", "-dict"} {
		if _, err := os.Stat(paths[k]); err != nil {
			return nil, fmt.Errorf("stt: pocketsphinx model: %w", err)
		}
		args = append(args, k, paths[k])
	}
	// No flat-lexicon second pass: it runs over the whole turn at End (130-330 ms for a
	// 3 s question here), while the tree search and best path, streamed, give the same
	// word accuracy on our flite test set with End in ~15 ms.
	defaults := [][2]string{{"-fwdflat", "no"}}
	// Two Gaussians per senone scored, not pocketsphinx's 4: a fifth less CPU per second
	// of speech with the same word accuracy on the flite set (BenchmarkSphinxSettings,
	// settings taken in turns utterance by utterance: 360 against 449 ms of CPU per
	// second of audio, 25 errors in 260 words with both).
	defaults = append(defaults, [2]string{"-topn", "2"})
	// A leaner search, measured the same way: no best-path pass over the word lattice
	// (the tree search's own hypothesis), at most 5 word exits and 5,000 HMMs a frame,
	// and a narrower phone-loop lookahead beam: a fifth less CPU again (231 against 295
	// ms per second of audio), 24 and 25 errors in the 260 words.
	defaults = append(defaults, [][2]string{{"-bestpath", "no"}, {"-maxwpf", "5"}, {"-maxhmmpf", "5000"},
		{"-pl_beam", "1e-5"}, {"-pl_pbeam", "1e-5"}}...)
	// pocketsphinx refuses an argument given twice: one of cfg.Args replaces our default.
	for _, d := range defaults {
		if !slices.Contains(cfg.Args, d[0]) {
			args = append(args, d[0], d[1])
		}
	}
	args = append(args, cfg.Args...)
	s := &Sphinx{log: cfg.Logger}
	for _, a := range args {
		s.argv = append(s.argv, C.CString(a))
	}
	for range cfg.Decoders {
		ps, err := s.newDecoder()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.idle = append(s.idle, ps)
	}
	s.fresh = saveCMN(s.idle[0])
	return s, nil
}

// cmnState is pocketsphinx's live cepstral mean normalisation as a decoder carries it
// from one utterance to the next: the mean the next utterance is normalised by, and the
// sum and frame count it is updated from. This version updates the mean only when an
// utterance ends, so a short turn is normalised by the mean alone, and the mean decided
// what a word like "okay" was heard as: through Opus, flite's "Okay." was "okay" on a
// decoder that had served a question, "will he" on one that had served noise. Each
// call now keeps its own (from a new decoder's, the model's -cmninit), and the
// transcriber updates it every interimEvery of a turn, as later pocketsphinx does: the
// rest of a call's first turn is normalised by its own audio so far (word accuracy
// through Opus 89% against 85% for the flite set, TestSphinxThroughOpus).
type cmnState struct {
	mean, sum []C.mfcc_t
	nframe    C.int32
}

func saveCMN(ps *C.ps_decoder_t) cmnState {
	n := int(C.bl_cmn_veclen(ps))
	if n == 0 {
		return cmnState{}
	}
	st := cmnState{mean: make([]C.mfcc_t, n), sum: make([]C.mfcc_t, n)}
	// mfcc_t is a float: cgo may write the slices in place.
	C.bl_cmn_save(ps, &st.mean[0], &st.sum[0], &st.nframe)
	return st
}

func (st cmnState) load(ps *C.ps_decoder_t) {
	if len(st.mean) == 0 || int(C.bl_cmn_veclen(ps)) != len(st.mean) {
		return
	}
	C.bl_cmn_load(ps, &st.mean[0], &st.sum[0], st.nframe)
}

func (s *Sphinx) newDecoder() (*C.ps_decoder_t, error) {
	makeMu.Lock()
	defer makeMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("stt: recogniser closed")
	}
	C.bl_quiet()
	ps := C.bl_ps_new(C.int(len(s.argv)), (**C.char)(unsafe.Pointer(&s.argv[0])))
	if ps == nil {
		return nil, errors.New("stt: pocketsphinx: cannot make a decoder")
	}
	s.mu.Lock()
	s.all = append(s.all, ps)
	s.mu.Unlock()
	return ps, nil
}

// get takes an idle decoder, or makes one when all are busy.
func (s *Sphinx) get() (*C.ps_decoder_t, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("stt: recogniser closed")
	}
	if n := len(s.idle); n > 0 {
		ps := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return ps, nil
	}
	busy := len(s.all)
	s.mu.Unlock()
	s.log.Warn("stt: all pocketsphinx decoders busy, making another (raise PERSONA_STT_DECODERS)", "decoders", busy)
	return s.newDecoder()
}

func (s *Sphinx) put(ps *C.ps_decoder_t) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		C.ps_free(ps)
		return
	}
	s.idle = append(s.idle, ps)
}

// Decoders is how many decoders exist (idle and busy).
func (s *Sphinx) Decoders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.all)
}

// Close frees the idle decoders; busy ones are freed when their turn ends.
func (s *Sphinx) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, ps := range s.idle {
		C.ps_free(ps)
	}
	s.idle = nil
	s.mu.Unlock()
	s.freeArgs()
	return nil
}

// freeArgs frees the arguments once no decoder is being made from them.
func (s *Sphinx) freeArgs() {
	makeMu.Lock()
	defer makeMu.Unlock()
	for _, a := range s.argv {
		C.free(unsafe.Pointer(a))
	}
	s.argv = nil
}

// NewTranscriber makes a call's transcriber. It holds no decoder between turns, only
// the call's cepstral mean (cmnState).
func (s *Sphinx) NewTranscriber(ctx context.Context) (speech.Transcriber, error) {
	return &sphinxTranscriber{s: s, cmn: s.fresh}, nil
}

type sphinxTranscriber struct {
	s   *Sphinx
	ps  *C.ps_decoder_t // the current turn's decoder, nil between turns
	cmn cmnState        // the call's, out of its last turn

	// sinceHyp is how many samples were written since the turn's partial hypothesis was
	// last read; interim is that hypothesis (Interim).
	sinceHyp int
	mu       sync.Mutex
	interim  string
}

var _ speech.InterimCatcher = (*sphinxTranscriber)(nil)

// interimEvery is how much audio passes between two reads of the turn's partial
// hypothesis (a backtrace of the search so far, well under a millisecond): live
// captions of the caller change about three times a second.
const interimEvery = speech.Rate * 300 / 1000

// Interim is the open turn's words so far, as pocketsphinx's partial hypothesis had them
// at the last read ("" before any word, and between turns).
func (t *sphinxTranscriber) Interim() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.interim
}

func (t *sphinxTranscriber) setInterim(text string) {
	t.mu.Lock()
	t.interim = text
	t.mu.Unlock()
}

func (t *sphinxTranscriber) Begin() error {
	if t.ps != nil {
		t.Abort()
	}
	t.sinceHyp = 0
	t.setInterim("")
	ps, err := t.s.get()
	if err != nil {
		return err
	}
	// The call's cepstral mean, and a new stream: pocketsphinx's noise estimate (its
	// spectral subtraction) starts again from the turn's first audio rather than from
	// whatever turn, of whatever call, the decoder served last. A call is heard the same
	// whatever the pool's decoders served before, and learns nothing of another
	// caller's line.
	t.cmn.load(ps)
	if C.ps_start_stream(ps) < 0 || C.ps_start_utt(ps) < 0 {
		t.s.put(ps)
		return errors.New("stt: pocketsphinx: cannot start an utterance")
	}
	t.ps = ps
	return nil
}

func (t *sphinxTranscriber) Write(pcm []int16) error {
	if t.ps == nil {
		return errors.New("stt: Write outside a turn")
	}
	if len(pcm) == 0 {
		return nil
	}
	// int16 samples hold no Go pointers, so cgo may read the slice in place.
	if C.ps_process_raw(t.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), C.FALSE, C.FALSE) < 0 {
		return errors.New("stt: pocketsphinx: cannot process audio")
	}
	if t.sinceHyp += len(pcm); t.sinceHyp >= interimEvery {
		t.sinceHyp = 0
		C.bl_cmn_update(t.ps) // the turn's frames so far count from here on (cmnState)
		t.readHyp()
	}
	return nil
}

// CatchUp reads the partial hypothesis now (speech.InterimCatcher). It leaves the
// cepstral mean's updates on their interimEvery steps, so a turn is heard the same
// however often the conversation catches up.
func (t *sphinxTranscriber) CatchUp() {
	if t.ps != nil {
		t.readHyp()
	}
}

// readHyp sets the interim words to the turn's partial hypothesis.
func (t *sphinxTranscriber) readHyp() {
	var score C.int32
	if hyp := C.ps_get_hyp(t.ps, &score); hyp != nil {
		t.setInterim(strings.Join(strings.Fields(C.GoString(hyp)), " "))
	}
}

func (t *sphinxTranscriber) End(ctx context.Context) (string, error) {
	ps := t.ps
	if ps == nil {
		return "", errors.New("stt: End outside a turn")
	}
	t.ps = nil
	t.setInterim("")
	defer t.s.put(ps)
	if C.ps_end_utt(ps) < 0 {
		return "", errors.New("stt: pocketsphinx: cannot end the utterance")
	}
	t.cmn = saveCMN(ps)
	var score C.int32
	hyp := C.ps_get_hyp(ps, &score)
	if hyp == nil {
		return "", nil
	}
	return strings.Join(strings.Fields(C.GoString(hyp)), " "), nil
}

func (t *sphinxTranscriber) Abort() {
	ps := t.ps
	if ps == nil {
		return
	}
	t.ps = nil
	t.setInterim("")
	C.ps_end_utt(ps)
	t.cmn = saveCMN(ps)
	t.s.put(ps)
}

func (t *sphinxTranscriber) Close() error {
	t.Abort()
	return nil
}
