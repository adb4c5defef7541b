// Command unusedexports counts the module's exported names that nothing outside their
// package uses: the top-level functions, types, variables and constants of every
// non-main package, looked for as pkg.Name in every other package of the module (its
// code and its tests). It prints the figure, and with -v each name.
//
//	go run ./scripts/unusedexports [-v] [packages]   (default ./...)
//
// It reads `go list -json` and parses the files (go/parser, no type checking), so a
// name used only through an interface or reflection counts as unused, and methods and
// struct fields are not counted. Generated files (// Code generated ... DO NOT EDIT.)
// are read for uses but their names are not counted: the generator decides them.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

// Package is what `go list -json` says about a package, as far as this command needs.
type Package struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
}

// Source is one parsed package: its own files (code and in-package tests) and its
// external test files (package x_test), which count as its own.
type Source struct {
	Path, Name string
	Code       []*ast.File // non-test files
	Tests      []*ast.File // _test.go files, in-package and external
	Generated  map[*ast.File]bool
}

// Report sorts every exported name into what uses it outside its package.
type Report struct {
	Exported  int
	Unused    []string // no use outside the package
	TestsOnly []string // used outside the package by tests only
}

func main() {
	verbose := flag.Bool("v", false, "list the names")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	pkgs, err := goList(patterns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unusedexports:", err)
		os.Exit(1)
	}
	srcs, err := parse(pkgs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "unusedexports:", err)
		os.Exit(1)
	}
	r := Count(srcs)
	if *verbose {
		for _, n := range r.Unused {
			fmt.Println("unused:", n)
		}
		for _, n := range r.TestsOnly {
			fmt.Println("tests only:", n)
		}
	}
	fmt.Printf("unused exports: %d of %d exported names have no user outside their package (%d more only tests)\n",
		len(r.Unused), r.Exported, len(r.TestsOnly))
}

func goList(patterns []string) ([]Package, error) {
	cmd := exec.Command("go", append([]string{"list", "-json"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p Package
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func parse(pkgs []Package) ([]Source, error) {
	fset := token.NewFileSet()
	var srcs []Source
	for _, p := range pkgs {
		s := Source{Path: p.ImportPath, Name: p.Name, Generated: map[*ast.File]bool{}}
		read := func(names []string, dst *[]*ast.File) error {
			for _, n := range names {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
				if err != nil {
					return err
				}
				s.Generated[f] = ast.IsGenerated(f)
				*dst = append(*dst, f)
			}
			return nil
		}
		if err := read(append(append([]string{}, p.GoFiles...), p.CgoFiles...), &s.Code); err != nil {
			return nil, err
		}
		if err := read(append(append([]string{}, p.TestGoFiles...), p.XTestGoFiles...), &s.Tests); err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// Count finds each exported top-level name of a non-main package and where it is used.
func Count(srcs []Source) Report {
	names := map[string]string{} // import path -> package name
	for _, s := range srcs {
		names[s.Path] = s.Name
	}
	// uses[path.Name] is true for a use from code, false for a use from tests only.
	uses := map[string]bool{}
	use := func(key string, code bool) {
		if code {
			uses[key] = true
		} else if _, ok := uses[key]; !ok {
			uses[key] = false
		}
	}
	declared := map[string][]string{} // import path -> its exported names
	for _, s := range srcs {
		if s.Name == "main" {
			continue
		}
		for _, f := range s.Code {
			if !s.Generated[f] {
				declared[s.Path] = append(declared[s.Path], exported(f)...)
			}
		}
	}
	for _, s := range srcs {
		for i, files := range [][]*ast.File{s.Code, s.Tests} {
			for _, f := range files {
				refs(f, names, s.Path, declared, func(path, name string) { use(path+"."+name, i == 0) })
			}
		}
	}
	var r Report
	for path, ns := range declared {
		for _, n := range ns {
			r.Exported++
			key := path + "." + n
			code, ok := uses[key]
			switch {
			case !ok:
				r.Unused = append(r.Unused, key)
			case !code:
				r.TestsOnly = append(r.TestsOnly, key)
			}
		}
	}
	sort.Strings(r.Unused)
	sort.Strings(r.TestsOnly)
	return r
}

// exported lists a file's exported top-level names (not methods).
func exported(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				out = append(out, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sp.Name.IsExported() {
						out = append(out, sp.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// refs calls found for every pkg.Name in f that names another package of the module
// (dot imports: every exported name of it that f mentions).
func refs(f *ast.File, names map[string]string, self string, declared map[string][]string, found func(path, name string)) {
	local := map[string]string{} // local name -> import path
	var dots []string
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		pkgName, ok := names[path]
		if !ok || path == self {
			continue
		}
		switch {
		case imp.Name == nil:
			local[pkgName] = path
		case imp.Name.Name == ".":
			dots = append(dots, path)
		case imp.Name.Name != "_":
			local[imp.Name.Name] = path
		}
	}
	if len(local) == 0 && len(dots) == 0 {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				if path, ok := local[id.Name]; ok {
					found(path, n.Sel.Name)
				}
			}
		case *ast.Ident:
			for _, path := range dots {
				for _, d := range declared[path] {
					if d == n.Name {
						found(path, n.Name)
					}
				}
			}
		}
		return true
	})
}
