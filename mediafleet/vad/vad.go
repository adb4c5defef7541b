// Package vad detects the caller's speech with Silero VAD (the v5 ONNX model) on ONNX
// Runtime: 16 kHz audio, one decision per 512-sample (32 ms) window.
//
// The model is loaded once per worker process (Load) and shared by every call; each
// call gets its own Detector, which carries the model's recurrent state and the last 64
// samples of context from one window to the next (Silero v5 takes the 512 new samples
// with those 64 prepended: an input of 576).
//
// It drives ONNX Runtime through github.com/yalue/onnxruntime_go rather than
// sherpa-onnx's VAD API: sherpa's VoiceActivityDetector reports speech only once its
// own min-speech window has passed (IsSpeech lags speech onset by about 160 ms, see the
// design's SPEECH.md), and hides the per-window probability. Barge-in must pause the
// assistant on the first confident window, so the conversation needs the raw
// probability of every window and makes its own onset and end-of-turn decisions.
//
// Where the files are found (first that exists):
//
//	ONNXRUNTIME_LIB    the ONNX Runtime shared library; default .cache/lib/libonnxruntime.so
//	                   in the repository (searched upward from the working directory),
//	                   else ../lib/bridgeline/libonnxruntime.so beside the executable's
//	                   folder: /usr/local/lib/bridgeline/libonnxruntime.so in the image,
//	                   where the worker is /usr/local/bin/persona-worker.
//	PERSONA_VAD_MODEL  the Silero VAD model; default .cache/models/silero_vad_v5.onnx in
//	                   the repository, else ../lib/bridgeline/models/silero_vad_v5.onnx
//	                   beside the executable's folder (the image's
//	                   /usr/local/lib/bridgeline/models/silero_vad_v5.onnx).
//	PERSONA_VAD_GATE_DBFS the level gate (below): windows quieter than this many dBFS
//	                   (RMS against full scale) are not given to the model once it has
//	                   scored 320 ms of them; default -60, "off" runs it on every window.
//
// The level gate: a call is mostly silence (the caller listens half of it), and on
// silence the model is most of the VAD's cost (about 0.5 ms a window on this machine,
// 31 windows a second per call). A window far below any speech (-60 dBFS RMS is 30 dB
// under quiet speech on a line: digital silence, a muted or DTX-silent caller, a quiet
// room) scores 0 without running the model, once the model has itself scored
// GateSettle such windows in a row. When sound comes back, the model resumes from the
// state a new detector has after GateSettle windows of silence (see resume), so speech
// onset (barge-in) is found on the same window as without the gate (TestLevelGate),
// with no extra work at the onset.
package vad

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

const (
	// Rate is the sample rate the model takes.
	Rate = 16000
	// Window is the number of new samples per decision (32 ms).
	Window = 512
	// contextSize is how many samples of the previous window Silero v5 sees again.
	contextSize = 64
	// DefaultGateDBFS is the level gate's default (PERSONA_VAD_GATE_DBFS).
	DefaultGateDBFS = -60.0
	// GateSettle is how many quiet windows in a row (320 ms) the model scores before the
	// gate skips it.
	GateSettle = 10
)

// ImageDir is where the worker image installs the runtime and the model, relative to
// the folder of the worker's executable (/usr/local/bin in the image).
const ImageDir = "../lib/bridgeline"

// Config says where the runtime and the model are. Empty fields take the defaults the
// package documentation lists.
type Config struct {
	LibPath   string
	ModelPath string
	// Gate is the level gate in dBFS, a number at most 0 ("-60"), or "off"; "" takes
	// DefaultGateDBFS.
	Gate string
}

// ConfigFromEnv reads ONNXRUNTIME_LIB, PERSONA_VAD_MODEL and PERSONA_VAD_GATE_DBFS
// through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{LibPath: getenv("ONNXRUNTIME_LIB"), ModelPath: getenv("PERSONA_VAD_MODEL"),
		Gate: getenv("PERSONA_VAD_GATE_DBFS")}
}

// gateLevel turns Config.Gate into the mean square of int16 samples under which a
// window is quiet; 0 when the gate is off.
func gateLevel(gate string) (float64, error) {
	dbfs := DefaultGateDBFS
	switch g := strings.TrimSpace(gate); g {
	case "":
	case "off":
		return 0, nil
	default:
		v, err := strconv.ParseFloat(g, 64)
		if err != nil || v > 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("vad: PERSONA_VAD_GATE_DBFS %q: want a level in dBFS at most 0 (e.g. -60), or off", gate)
		}
		dbfs = v
	}
	rms := 32768 * math.Pow(10, dbfs/20)
	return rms * rms, nil
}

// DefaultLibPath is the ONNX Runtime library used when none is configured: the
// repository's .cache copy, else the image's.
func DefaultLibPath() string {
	return firstExisting(filepath.Join(".cache", "lib", "libonnxruntime.so"), filepath.Join(ImageDir, "libonnxruntime.so"))
}

// DefaultModelPath is the Silero model used when none is configured.
func DefaultModelPath() string {
	return firstExisting(filepath.Join(".cache", "models", "silero_vad_v5.onnx"), filepath.Join(ImageDir, "models", "silero_vad_v5.onnx"))
}

// firstExisting finds repoRel in the working directory or one of its parents (tests run
// in their package's folder, the worker from the repository root), else returns
// exeRel resolved from the executable's folder.
func firstExisting(repoRel, exeRel string) string {
	if dir, err := os.Getwd(); err == nil {
		for {
			p := filepath.Join(dir, repoRel)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return exeRel
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Join(filepath.Dir(exe), exeRel)
}

// ONNX Runtime's environment is process-wide and can be created once.
var (
	envOnce sync.Once
	envErr  error
	envLib  string
)

func initRuntime(lib string) error {
	envOnce.Do(func() {
		envLib = lib
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			envErr = fmt.Errorf("vad: onnx runtime %s: %w", lib, err)
		}
	})
	if envErr == nil && lib != envLib {
		return fmt.Errorf("vad: onnx runtime already loaded from %s, not %s", envLib, lib)
	}
	return envErr
}

// Model is the loaded Silero model, shared by every call of the process. Its session
// runs concurrently: each Detector passes its own tensors.
type Model struct {
	session *ort.DynamicAdvancedSession
	gate    float64 // the level gate's mean square; 0: off
	// settled is the state of a new detector after GateSettle windows of digital
	// silence, where the level gate resumes the model.
	settled []float32
}

// Load loads ONNX Runtime (once per process) and the model.
func Load(cfg Config) (*Model, error) {
	if cfg.LibPath == "" {
		cfg.LibPath = DefaultLibPath()
	}
	if cfg.ModelPath == "" {
		cfg.ModelPath = DefaultModelPath()
	}
	gate, err := gateLevel(cfg.Gate)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.ModelPath); err != nil {
		return nil, fmt.Errorf("vad: model: %w", err)
	}
	if err := initRuntime(cfg.LibPath); err != nil {
		return nil, err
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("vad: session options: %w", err)
	}
	defer opts.Destroy()
	// One thread per run: a window is ~0.1 ms of work, and the worker runs many calls at
	// once, so ORT's own thread pools would only add wake-ups and contention.
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("vad: session options: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("vad: session options: %w", err)
	}
	s, err := ort.NewDynamicAdvancedSession(cfg.ModelPath,
		[]string{"input", "state", "sr"}, []string{"output", "stateN"}, opts)
	if err != nil {
		return nil, fmt.Errorf("vad: load %s: %w", cfg.ModelPath, err)
	}
	m := &Model{session: s, gate: gate}
	if gate > 0 {
		d, err := m.NewDetector()
		if err != nil {
			_ = s.Destroy()
			return nil, err
		}
		d.gate = 0
		silence := make([]int16, Window)
		for range GateSettle {
			if _, err := d.Prob(silence); err != nil {
				_ = d.Close()
				_ = s.Destroy()
				return nil, err
			}
		}
		m.settled = append([]float32(nil), d.state.GetData()...)
		if err := d.Close(); err != nil {
			_ = s.Destroy()
			return nil, err
		}
	}
	return m, nil
}

// Close frees the model. Detectors must be closed first.
func (m *Model) Close() error {
	if err := m.session.Destroy(); err != nil {
		return fmt.Errorf("vad: close model: %w", err)
	}
	return nil
}

// Detector is one call's voice activity detector: it implements speech.VAD. It is
// not safe for concurrent use (one call's audio is one stream).
type Detector struct {
	m      *Model
	input  *ort.Tensor[float32] // [1, 576]: 64 samples of context, then the window
	state  *ort.Tensor[float32] // [2, 1, 128]
	sr     *ort.Tensor[int64]   // [1]: 16000
	output *ort.Tensor[float32] // [1, 1]
	stateN *ort.Tensor[float32] // [2, 1, 128]
	gate   float64              // the model's level gate
	quiet  int                  // quiet windows in a row the model scored
	// skipped: the gate skipped the model since its last run; last is the end of the
	// latest window skipped (the context of the next).
	skipped bool
	last    [contextSize]int16
	runs    int // windows the model scored (tests)
}

// NewDetector makes a detector with fresh state.
func (m *Model) NewDetector() (*Detector, error) {
	d := &Detector{m: m, gate: m.gate}
	var err error
	if d.input, err = ort.NewEmptyTensor[float32](ort.NewShape(1, contextSize+Window)); err != nil {
		return nil, fmt.Errorf("vad: tensor: %w", err)
	}
	if d.state, err = ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128)); err != nil {
		d.Close()
		return nil, fmt.Errorf("vad: tensor: %w", err)
	}
	if d.sr, err = ort.NewTensor(ort.NewShape(1), []int64{Rate}); err != nil {
		d.Close()
		return nil, fmt.Errorf("vad: tensor: %w", err)
	}
	if d.output, err = ort.NewEmptyTensor[float32](ort.NewShape(1, 1)); err != nil {
		d.Close()
		return nil, fmt.Errorf("vad: tensor: %w", err)
	}
	if d.stateN, err = ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128)); err != nil {
		d.Close()
		return nil, fmt.Errorf("vad: tensor: %w", err)
	}
	return d, nil
}

// WindowSize is the number of 16 kHz samples Prob takes.
func (d *Detector) WindowSize() int { return Window }

// Prob is the probability that the window holds speech.
func (d *Detector) Prob(window []int16) (float32, error) {
	if len(window) != Window {
		return 0, fmt.Errorf("vad: window of %d samples, want %d", len(window), Window)
	}
	if d.gate > 0 && meanSquare(window) < d.gate {
		if d.quiet >= GateSettle {
			// Skipped: only the recent quiet audio is kept, to be scored when sound comes.
			d.skipped = true
			copy(d.last[:], window[Window-contextSize:])
			return 0, nil
		}
		d.quiet++
	} else {
		d.quiet = 0
		if d.skipped {
			d.resume()
		}
	}
	return d.run(window)
}

// resume brings the model back after skipped windows, without running it: its
// recurrent state does not settle on silence (it keeps drifting for as long as the
// silence lasts), so it takes the state a new detector has after GateSettle windows of
// digital silence (Model.settled, computed once at Load), and the context of the latest
// quiet window. The sound is then scored as by a new detector after that silence, which
// is what finds speech onsets in the tests (TestDetectsSpeechOnset, TestLevelGate), and
// the onset window costs one run of the model, as without the gate.
func (d *Detector) resume() {
	d.skipped = false
	copy(d.state.GetData(), d.m.settled)
	in := d.input.GetData()
	for i, s := range d.last {
		in[Window+i] = float32(s) / 32768
	}
}

// run scores the window with the model.
func (d *Detector) run(window []int16) (float32, error) {
	in := d.input.GetData()
	d.runs++
	// The context is the previous window's last 64 samples, already at the input's end.
	copy(in[:contextSize], in[Window:])
	for i, s := range window {
		in[contextSize+i] = float32(s) / 32768
	}
	if err := d.m.session.Run([]ort.Value{d.input, d.state, d.sr}, []ort.Value{d.output, d.stateN}); err != nil {
		return 0, fmt.Errorf("vad: run: %w", err)
	}
	copy(d.state.GetData(), d.stateN.GetData())
	return d.output.GetData()[0], nil
}

// Reset forgets the state and the context carried between windows.
func (d *Detector) Reset() {
	d.input.ZeroContents()
	d.state.ZeroContents()
	d.quiet, d.skipped = 0, false
}

// meanSquare is the window's mean square, in int16 units.
func meanSquare(w []int16) float64 {
	var sum int64
	for _, s := range w {
		sum += int64(s) * int64(s)
	}
	return float64(sum) / float64(len(w))
}

// Close frees the detector's tensors.
func (d *Detector) Close() error {
	var errs []error
	for _, t := range []interface{ Destroy() error }{d.input, d.state, d.sr, d.output, d.stateN} {
		if t == nil || isNilTensor(t) {
			continue
		}
		errs = append(errs, t.Destroy())
	}
	return errors.Join(errs...)
}

func isNilTensor(t interface{ Destroy() error }) bool {
	switch v := t.(type) {
	case *ort.Tensor[float32]:
		return v == nil
	case *ort.Tensor[int64]:
		return v == nil
	}
	return false
}
