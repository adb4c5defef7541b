// Package e2e_test keeps the tree's walls: the tests that need the media stack (cgo
// codecs, livekit-server, the sim, persona workers, the Lambda processes) live under
// e2e/, so every package under shared/, events/ and functions/ builds and tests without
// cgo and without the media fleet.
package e2e_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bridgeline/bridgeline/functions/functiontest"
)

// domain are the trees whose tests must build without cgo or the media stack.
var domain = []string{"./shared/...", "./events/...", "./functions/..."}

// upward are the trees a domain package, or its tests, must not import: the media fleet
// and the binaries and tests that assemble the whole stack.
var upward = []string{"mediafleet", "cmd", "e2e", "examples", "soak"}

const module = "github.com/bridgeline/bridgeline/"

// TestDomainTestsNeedNoCgo: go list -test -deps over shared/, events/ and functions/
// names no package outside the standard library with cgo files and none of the upward
// trees, so `go test ./shared/...` needs no libvpx, Opus or flite, and no media code.
func TestDomainTestsNeedNoCgo(t *testing.T) {
	for _, root := range domain {
		t.Run(strings.Trim(root, "./"), func(t *testing.T) {
			lines := functiontest.GoList(t, "-test", "-deps", "-f", "{{.ImportPath}}|{{.Standard}}|{{len .CgoFiles}}", root)
			if len(lines) < 50 {
				t.Fatalf("go list -test -deps %s listed only %d packages: the check saw nothing", root, len(lines))
			}
			for _, l := range lines {
				f := strings.Split(l, "|")
				if len(f) != 3 {
					t.Fatalf("go list line %q", l)
				}
				path, std, cgo := f[0], f[1] == "true", f[2] != "0"
				if std {
					continue
				}
				if cgo {
					t.Errorf("%s (with its tests) needs cgo: %s; move the test that needs it to e2e/", root, path)
				}
				for _, up := range upward {
					if rel, ok := strings.CutPrefix(path, module); ok && (rel == up || strings.HasPrefix(rel, up+"/")) {
						t.Errorf("%s (with its tests) imports %s; move the test that needs it to e2e/", root, path)
					}
				}
			}
		})
	}
}

// leaves are the shared/ packages the event contract and its transport may use: helpers
// with no domain in them.
var leaves = []string{"shared/apierr", "shared/egress", "shared/freeport", "shared/ident", "shared/listing"}

// TestEventsHoldNoDomain: events/ is the event contract and its transport (signing,
// delivery, the relay, the AWS bus); what they deliver for (endpoints, decisions,
// sessions) is the domain's, in shared/, which imports events/ and never the reverse.
func TestEventsHoldNoDomain(t *testing.T) {
	lines := functiontest.GoList(t, "-deps", "-f", "{{.ImportPath}}", "./events/...")
	if len(lines) < 20 {
		t.Fatalf("go list -deps ./events/... listed only %d packages: the check saw nothing", len(lines))
	}
	for _, path := range lines {
		rel, ok := strings.CutPrefix(path, module)
		if !ok || !strings.HasPrefix(rel, "shared/") || slices.Contains(leaves, rel) {
			continue
		}
		t.Errorf("events/ imports %s, a domain package; declare what the transport needs in events/ and let shared/ adapt to it", rel)
	}
}

// configReaders are the packages besides programs (package main) that read the
// environment: the configuration (shared/config) and the Lambda wiring that turns a
// function's environment into its parts. Every other package takes its settings as
// values, read by the program that sets it up.
var configReaders = []string{"shared/config", "functions/internal/wire", "functions/internal/s3wire"}

// envReads are the calls that read this process's environment. A package that starts a
// child process passes the environment on with exec.Cmd.Environ (the child's
// environment, not a setting).
var envReads = map[string][]string{
	"os":      {"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
	"syscall": {"Getenv", "Environ"},
}

// TestOnlyMainsReadTheEnvironment: no package a program links reads the environment
// except package main itself and configReaders. Tests may: _test.go files and the
// packages only tests link (test doubles and harnesses such as livekittest or
// dynamolocal, which no program imports) read CI and their overrides themselves.
func TestOnlyMainsReadTheEnvironment(t *testing.T) {
	type pkg struct {
		name, dir string
		files     []string
	}
	pkgs := map[string]pkg{}
	var mains []string
	for _, l := range functiontest.GoList(t, "-f", "{{.ImportPath}}|{{.Name}}|{{.Dir}}|{{join .GoFiles \",\"}},{{join .CgoFiles \",\"}}", "./...") {
		f := strings.Split(l, "|")
		if len(f) != 4 {
			t.Fatalf("go list line %q", l)
		}
		pkgs[f[0]] = pkg{name: f[1], dir: f[2], files: strings.FieldsFunc(f[3], func(r rune) bool { return r == ',' })}
		if f[1] == "main" {
			mains = append(mains, f[0])
		}
	}
	if len(pkgs) < 100 || len(mains) < 20 {
		t.Fatalf("go list ./... listed %d packages, %d programs: the check saw nothing", len(pkgs), len(mains))
	}
	linked := map[string]bool{}
	for _, path := range functiontest.GoList(t, append([]string{"-deps", "-f", "{{.ImportPath}}"}, mains...)...) {
		linked[path] = true
	}
	checked := 0
	for path, p := range pkgs {
		rel, _ := strings.CutPrefix(path, module)
		if p.name == "main" || slices.Contains(configReaders, rel) || !linked[path] {
			continue
		}
		for _, name := range p.files {
			checked++
			for _, call := range envCalls(t, filepath.Join(p.dir, name)) {
				t.Errorf("%s/%s calls %s: read the setting in the program that sets %s up (cmd/, the Lambda wiring) and pass it in a Config", rel, name, call, rel)
			}
		}
	}
	if checked < 200 {
		t.Fatalf("checked only %d files: the check saw nothing", checked)
	}
	// The detector sees the reads that are allowed, so it would see the others.
	if calls := envCalls(t, filepath.Join(pkgs[module+"shared/config"].dir, "config.go")); len(calls) == 0 {
		t.Error("envCalls found no read in shared/config/config.go, which calls os.Getenv")
	}
}

// envCalls lists the calls of envReads in a Go file, as "os.Getenv at line N".
func envCalls(t *testing.T, file string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := map[string]string{} // the name a file gives an import -> its path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := envReads[path]; !ok {
			continue
		}
		name := path
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = path
	}
	var calls []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if path, ok := local[id.Name]; ok && slices.Contains(envReads[path], sel.Sel.Name) {
			calls = append(calls, fmt.Sprintf("%s.%s at line %d", path, sel.Sel.Name, fset.Position(sel.Pos()).Line))
		}
		return true
	})
	return calls
}
