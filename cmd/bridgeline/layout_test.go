package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoPath is a path of the repository as the README writes it.
var repoPath = regexp.MustCompile(`\b(?:cmd|functions|shared|events|mediafleet|infra|examples|sdk|docs|scripts|soak)/[A-Za-z0-9_./<>-]*[A-Za-z0-9_>]`)

// TestReadmeLayoutIsTrue: every path the README's "Layout" and "Read first" sections,
// and docs/layout.md, name exists, so a move that forgets them fails here.
func TestReadmeLayoutIsTrue(t *testing.T) {
	root := filepath.Join("..", "..")
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	start := strings.Index(text, "## Layout\n")
	end := strings.Index(text[max(start, 0):], "\n## On AWS")
	if start < 0 || end < 0 || !strings.Contains(text[start:start+end], "### Read first") {
		t.Fatal("README.md has no \"## Layout\" section with \"### Read first\" before \"## On AWS\"")
	}
	layout, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := text[start:start+end] + "\n" + string(layout)
	var paths []string
	for _, loc := range repoPath.FindAllStringIndex(section, -1) {
		if !strings.HasSuffix(section[:loc[0]], "../") { // beside the repository, not in it
			paths = append(paths, section[loc[0]:loc[1]])
		}
	}
	if len(paths) < 20 {
		t.Fatalf("found only %d paths in the layout section: %q", len(paths), paths)
	}
	for _, p := range paths {
		if strings.Contains(p, "<") { // functions/<name>/: one of many
			p = p[:strings.Index(p, "<")]
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("README.md names %s, which does not exist", p)
		}
	}
}

// TestReadmeIsADoor: the README stays a door, at most 400 lines with no table cell over
// 200 characters; details belong in docs/, which its tables link to.
func TestReadmeIsADoor(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if len(lines) > 400 {
		t.Errorf("README.md has %d lines, want at most 400: move the details into docs/", len(lines))
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, cell := range strings.Split(line, "|") {
			if n := len([]rune(strings.TrimSpace(cell))); n > 200 {
				t.Errorf("README.md:%d has a table cell of %d characters, want at most 200: %.60s...", i+1, n, strings.TrimSpace(cell))
			}
		}
	}
}
