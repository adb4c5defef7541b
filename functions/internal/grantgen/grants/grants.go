// Package grants rewrites the DynamoDB grants of template.yaml's functions from
// functions/internal/wire's Tables and Writes: the one place that says which tables a
// function uses and how. A package of its own so that the generator command and the
// template test run the same code.
package grants

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bridgeline/bridgeline/functions/internal/wire"
)

// Marker starts the generated policy entry of a function (a YAML comment).
const Marker = "# DynamoDB: generated from functions/internal/wire (Tables, Writes)"

var (
	resourceLine = regexp.MustCompile(`^  [A-Za-z0-9]+:\s*$`)
	codeURI      = regexp.MustCompile(`^      CodeUri: functions/([a-z0-9-]+)\s*$`)
	templateRef  = regexp.MustCompile(`^        - DynamoDB(Read|Crud)Policy:\s*$`)
)

// Entry is the generated Policies entry of function: one statement per table, or ""
// when the function uses no table.
func Entry(function string) string {
	tables := wire.Tables[function]
	if len(tables) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("        " + Marker + "\n")
	b.WriteString("        # by go run ./functions/internal/grantgen: change the maps, not these lines.\n")
	b.WriteString("        - Statement:\n")
	for _, t := range tables {
		id := t.LogicalID()
		fmt.Fprintf(&b, "            - Sid: %s\n", id)
		b.WriteString("              Effect: Allow\n")
		fmt.Fprintf(&b, "              Action: [%s]\n", strings.Join(wire.Actions(function, t), ", "))
		fmt.Fprintf(&b, "              Resource: [!GetAtt %s.Arn, !Sub \"${%s.Arn}/index/*\"]\n", id, id)
	}
	return b.String()
}

// Rewrite returns template with every function's DynamoDB grants replaced by its
// generated entry (Entry), placed first in its Policies; its other policies stay as
// they are. It fails on a function wire.Tables does not know, or one with tables and no
// Policies.
func Rewrite(template string) (string, error) {
	lines := strings.SplitAfter(template, "\n")
	var out []string
	for i := 0; i < len(lines); {
		if !resourceLine.MatchString(lines[i]) || i+1 >= len(lines) ||
			strings.TrimSpace(lines[i+1]) != "Type: AWS::Serverless::Function" {
			out = append(out, lines[i])
			i++
			continue
		}
		end := i + 1
		for end < len(lines) && !isTopOrResource(lines[end]) {
			end++
		}
		block, err := rewriteFunction(lines[i:end])
		if err != nil {
			return "", fmt.Errorf("%s: %w", strings.TrimSpace(lines[i]), err)
		}
		out = append(out, block...)
		i = end
	}
	return strings.Join(out, ""), nil
}

// isTopOrResource: a line that ends a resource's block.
func isTopOrResource(l string) bool {
	if strings.TrimSpace(l) == "" {
		return false
	}
	indent := len(l) - len(strings.TrimLeft(l, " "))
	return indent <= 2 && !strings.HasPrefix(strings.TrimSpace(l), "#")
}

func rewriteFunction(block []string) ([]string, error) {
	name := ""
	for _, l := range block {
		if m := codeURI.FindStringSubmatch(l); m != nil {
			name = m[1]
		}
	}
	if name == "" {
		return block, nil
	}
	if _, ok := wire.Tables[name]; !ok {
		return nil, fmt.Errorf("function %s has no entry in wire.Tables", name)
	}
	start := -1
	for i, l := range block {
		if strings.TrimRight(l, "\r\n") == "      Policies:" {
			start = i + 1
		}
	}
	entry := Entry(name)
	if start < 0 {
		if entry != "" {
			return nil, fmt.Errorf("function %s uses tables but has no Policies", name)
		}
		return block, nil
	}
	end := start
	for end < len(block) && (strings.TrimSpace(block[end]) == "" || indentOf(block[end]) >= 8) {
		end++
	}
	// Trailing blank lines belong to what follows.
	for end > start && strings.TrimSpace(block[end-1]) == "" {
		end--
	}
	kept, err := keptEntries(block[start:end])
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", name, err)
	}
	out := append([]string(nil), block[:start]...)
	if entry != "" {
		out = append(out, strings.SplitAfter(strings.TrimSuffix(entry, "\n"), "\n")...)
		out[len(out)-1] += "\n"
	}
	out = append(out, kept...)
	return append(out, block[end:]...), nil
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// keptEntries splits a Policies list into its entries (each with the comment lines
// above it) and returns those that are not DynamoDB grants: SAM's DynamoDB policy
// templates and the generated entry go.
func keptEntries(lines []string) ([]string, error) {
	var kept, pending []string
	var entry []string
	drop := false
	flush := func() {
		if entry != nil && !drop {
			kept = append(kept, entry...)
		}
		entry, drop = nil, false
	}
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case indentOf(l) == 8 && strings.HasPrefix(trimmed, "#"):
			if entry != nil && len(pending) == 0 {
				flush()
			}
			pending = append(pending, l)
		case indentOf(l) == 8 && strings.HasPrefix(trimmed, "- "):
			flush()
			entry = append(pending, l)
			for _, c := range pending {
				if strings.Contains(c, Marker) {
					drop = true
				}
			}
			pending = nil
			if templateRef.MatchString(l) {
				drop = true
			}
		default:
			if entry == nil {
				return nil, fmt.Errorf("unexpected line in Policies: %q", l)
			}
			entry = append(entry, l)
		}
	}
	flush()
	return append(kept, pending...), nil
}
