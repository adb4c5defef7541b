package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/mediafleet/engines"
	"github.com/bridgeline/bridgeline/mediafleet/livekitserver"
	"github.com/bridgeline/bridgeline/mediafleet/vad"
	"github.com/bridgeline/bridgeline/shared/persona"
)

// dockerfile is the image's last stage as the test reads it.
type dockerfile struct {
	copies   [][2]string // build-stage source, image destination
	packages []string    // Debian packages the image installs
}

func readDockerfile(t *testing.T) dockerfile {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continued lines, then keep the last stage.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var stage []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "FROM ") {
			stage = nil
		}
		stage = append(stage, line)
	}
	var d dockerfile
	aptInstall := regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9.+\- ]+)`)
	for _, line := range stage {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "COPY":
			if len(f) != 4 || f[1] != "--from=build" {
				t.Fatalf("Dockerfile: %q: the test stages only COPY --from=build <file> <path>", line)
			}
			d.copies = append(d.copies, [2]string{f[2], f[3]})
		case len(f) > 0 && f[0] == "RUN":
			if m := aptInstall.FindStringSubmatch(line); m != nil {
				d.packages = append(d.packages, strings.Fields(m[1])...)
			}
		}
	}
	if len(d.copies) == 0 || len(d.packages) == 0 {
		t.Fatalf("Dockerfile: last stage copies %v and installs %v", d.copies, d.packages)
	}
	return d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// buildDir holds the binaries build built; TestMain removes it.
var buildDir string

// binaries are the commands the image ships, by file name, with their package.
var binaries = map[string]string{"persona-worker": ".", "platform-gateway": "../platform-gateway", "sip-gateway": "../sip-gateway"}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
)

// build builds one of binaries as the Dockerfile does (cgo on), once per test binary.
func build(name string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if out, ok := buildCache[name]; ok {
		return out, nil
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "media-fleet-image")
		if err != nil {
			return "", err
		}
		buildDir = dir
	}
	out := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, binaries[name])
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", name, err, b)
	}
	buildCache[name] = out
	return out, nil
}

// localFile makes the build stage's file here: the worker built as the Dockerfile builds
// it, the runtime and the model from .cache, where make deps installs them.
func localFile(t *testing.T, root, src string) string {
	t.Helper()
	base := filepath.Base(src)
	if _, ok := binaries[base]; ok {
		out, err := build(base)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, dir := range []string{".cache/lib", ".cache/models"} {
		p := filepath.Join(root, dir, base)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("Dockerfile copies %s, which neither go build nor make deps (.cache) makes here", src)
	return ""
}

func stage(t *testing.T, d dockerfile) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: builds the image's binaries with cgo")
	}
	repo, err := livekitserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, c := range d.copies {
		b, err := os.ReadFile(localFile(t, repo, c[0]))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, c[1])
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// basePackages are in debian:bookworm-slim already.
var basePackages = []string{"libc6", "libstdc++6", "libgcc-s1", "zlib1g"}

// TestImageLibraries: every shared library the staged worker and runtime load comes from
// a package the image installs (or its base), so the image lacks none of them.
func TestImageLibraries(t *testing.T) {
	d := readDockerfile(t)
	root := stage(t, d)
	var bins []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && (strings.HasSuffix(p, ".so") || strings.Contains(p, "/bin/")) {
			bins = append(bins, p)
		}
		return nil
	})
	installed := closure(t, append(slices.Clone(d.packages), basePackages...))
	for _, bin := range bins {
		out, err := exec.Command("ldd", bin).CombinedOutput()
		if err != nil {
			t.Fatalf("ldd %s: %v: %s", bin, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 || f[1] != "=>" {
				continue
			}
			if f[2] == "not" {
				t.Errorf("%s: %s not found", filepath.Base(bin), f[0])
				continue
			}
			pkg := debianPackage(t, f[2])
			if !installed[pkg] {
				t.Errorf("%s needs %s from %s, which the image does not install", filepath.Base(bin), f[0], pkg)
			}
		}
	}
}

// closure is the packages apt installs for pkgs: them and, recursively, what they depend
// on (read from this machine's dpkg database, where make deps installed them all).
func closure(t *testing.T, pkgs []string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for len(pkgs) > 0 {
		p := pkgs[len(pkgs)-1]
		pkgs = pkgs[:len(pkgs)-1]
		if seen[p] {
			continue
		}
		seen[p] = true
		out, err := exec.Command("dpkg-query", "-W", "-f=${Depends},${Pre-Depends}", p).Output()
		if err != nil {
			continue // a virtual or uninstalled alternative
		}
		for _, dep := range strings.FieldsFunc(string(out), func(r rune) bool { return r == ',' || r == '|' }) {
			name, _, _ := strings.Cut(strings.TrimSpace(dep), " ")
			name, _, _ = strings.Cut(name, ":")
			if name != "" {
				pkgs = append(pkgs, name)
			}
		}
	}
	return seen
}

func debianPackage(t *testing.T, lib string) string {
	t.Helper()
	paths := []string{lib}
	if real, err := filepath.EvalSymlinks(lib); err == nil {
		paths = append(paths, real)
	}
	// Merged /usr: dpkg knows a file by the path its package shipped.
	for _, p := range slices.Clone(paths) {
		if rest, ok := strings.CutPrefix(p, "/usr/lib/"); ok {
			paths = append(paths, "/lib/"+rest)
		} else if rest, ok := strings.CutPrefix(p, "/lib/"); ok {
			paths = append(paths, "/usr/lib/"+rest)
		}
	}
	for _, p := range paths {
		out, err := exec.Command("dpkg", "-S", p).Output()
		if err == nil {
			pkg, _, _ := strings.Cut(strings.TrimSpace(string(out)), ":")
			return pkg
		}
	}
	t.Fatalf("no Debian package holds %s", lib)
	return ""
}

// TestImageRoot stages exactly what the Dockerfile copies into an empty root and runs the
// worker from there, as the image would (nothing from the repository's .cache), until it
// registers with livekit-server.
func TestImageRoot(t *testing.T) {
	d := readDockerfile(t)
	root := stage(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lk, err := livekitserver.Start(ctx, livekitserver.Config{Binary: os.Getenv("LIVEKIT_SERVER_BIN"), APIKey: "APIimage", APISecret: "image-test-secret-image-test-secret-0123"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		lk.Stop(sctx)
	}()

	// The control plane's token route, as it answers: the worker holds no LiveKit secret.
	const reportSecret = "image-test-report-secret-0123456789"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != persona.AgentTokenPath || persona.VerifyAgentTokenRequest(r, reportSecret) != nil {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		tok, err := persona.MintAgentToken(lk.Config().APIKey, lk.Config().APISecret, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(tok)
	}))
	defer api.Close()

	cmd := exec.CommandContext(ctx, filepath.Join(root, "usr/local/bin/persona-worker"))
	cmd.Dir = root
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + root,
		"LD_LIBRARY_PATH=" + filepath.Join(root, "usr/local/lib/bridgeline"),
		"LIVEKIT_URL=" + lk.WSURL(),
		"BRIDGELINE_API_URL=" + api.URL,
		"PERSONA_REPORT_SECRET=" + reportSecret,
		"PERSONA_AGENT_NAME=image-test",
		"PERSONA_STT_DECODERS=1",
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	var seen []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			seen = append(seen, sc.Text())
			continue
		}
		seen = append(seen, fmt.Sprint(m["msg"]))
		if m["level"] == "ERROR" {
			t.Errorf("worker logged an error: %s", sc.Text())
		}
		if m["msg"] == "registered" {
			return
		}
	}
	t.Fatalf("worker exited or timed out before registering; it logged:\n%s", strings.Join(seen, "\n"))
}

// TestEnginesFromImageRoot loads the speech engines as the worker does at start, from a
// copy of this test binary placed where the worker is in the staged root: ONNX Runtime
// and the VAD model must be found by their defaults beside the executable and load.
func TestEnginesFromImageRoot(t *testing.T) {
	if os.Getenv("BRIDGELINE_IMAGE_PROBE") == "1" {
		e, err := engines.FromEnv(os.Getenv, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		fmt.Printf("loaded runtime %s model %s\n", vad.DefaultLibPath(), vad.DefaultModelPath())
		return
	}
	root := stage(t, readDockerfile(t))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(root, "usr/local/bin/engines-probe")
	if err := os.WriteFile(probe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(probe, "-test.run=^TestEnginesFromImageRoot$", "-test.count=1")
	cmd.Dir = root
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + root, "BRIDGELINE_IMAGE_PROBE=1", "PERSONA_STT_DECODERS=1",
		"LD_LIBRARY_PATH=" + filepath.Join(root, "usr/local/lib/bridgeline"),
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("engines in the staged root: %v\n%s", err, out)
	}
	want := fmt.Sprintf("loaded runtime %s model %s", filepath.Join(root, "usr/local/lib/bridgeline/libonnxruntime.so"), filepath.Join(root, "usr/local/lib/bridgeline/models/silero_vad_v5.onnx"))
	if !strings.Contains(string(out), want) {
		t.Errorf("probe said:\n%s\nwant %q", out, want)
	}
}
