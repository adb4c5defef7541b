// Package functiontest finds the Lambda functions and their template.yaml resources for
// the tests that check them: functions/ (the template, the build, the import graph) and
// e2e/lambda (every function run under the Lambda Runtime API).
package functiontest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/infra/cfn"
)

// Root is the repository root: the nearest folder above the working directory (a test's
// package folder) that holds go.mod and template.yaml.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "template.yaml")); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no repository root with go.mod and template.yaml above the working directory")
		}
		dir = parent
	}
}

// GoList runs go list in the repository root and returns its lines.
func GoList(tb testing.TB, args ...string) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"list"}, args...)...)
	cmd.Dir = Root(tb)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		tb.Fatalf("go list %v: %v\n%s", args, err, msg)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// Names lists the function folders (functions/<name>/main.go), sorted.
func Names(tb testing.TB) []string {
	tb.Helper()
	dir := filepath.Join(Root(tb), "functions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "main.go")); err == nil {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

var (
	templateOnce sync.Once
	templateVal  *cfn.Template
	templateErr  error
)

// Template is template.yaml, parsed once.
func Template(tb testing.TB) *cfn.Template {
	tb.Helper()
	templateOnce.Do(func() { templateVal, templateErr = cfn.Load(filepath.Join(Root(tb), "template.yaml")) })
	if templateErr != nil {
		tb.Fatal(templateErr)
	}
	return templateVal
}

// LogicalID is a function's resource name in template.yaml: assistants-create ->
// AssistantsCreateFunction.
func LogicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Function"
}

// Resource returns the template's resource of a function.
func Resource(tb testing.TB, name string) cfn.Resource {
	tb.Helper()
	r, ok := Template(tb).Resources[LogicalID(name)]
	if !ok || r.Type != "AWS::Serverless::Function" {
		tb.Fatalf("template.yaml has no AWS::Serverless::Function %s for functions/%s", LogicalID(name), name)
	}
	return r
}

// EachIn calls fn for each entry of m[a][b] when that is a map.
func EachIn(m map[string]any, a, b string, fn func(string, any)) {
	ma, _ := m[a].(map[string]any)
	mb, _ := ma[b].(map[string]any)
	for k, v := range mb {
		fn(k, v)
	}
}

// Policies returns a function's Policies entries that are policy templates.
func Policies(t testing.TB, name string) []map[string]any {
	t.Helper()
	var out []map[string]any
	list, _ := Resource(t, name).Properties["Policies"].([]any)
	for _, p := range list {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Maps is the maps of a YAML list (nil when v is none).
func Maps(v any) []map[string]any {
	var out []map[string]any
	s, _ := v.([]any)
	for _, e := range s {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// samTemplateActions are the actions of SAM's DynamoDB policy templates
// (policy_templates.json), for a function still granted through one.
var samTemplateActions = map[string][]string{
	"DynamoDBReadPolicy": {"dynamodb:GetItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"},
	"DynamoDBCrudPolicy": {"dynamodb:GetItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable",
		"dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem"},
}

// DynamoGrants reads a function's DynamoDB grants from template.yaml: per table (its
// logical id), the actions granted on it, from explicit statements (whose resources are
// the table's ARN and its indexes') or SAM's policy templates.
func DynamoGrants(t testing.TB, name string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, p := range Policies(t, name) {
		for kind, args := range p {
			if acts, ok := samTemplateActions[kind]; ok {
				ref, _ := args.(map[string]any)["TableName"].(map[string]any)["Ref"].(string)
				out[ref] = append(out[ref], acts...)
			}
		}
		for _, st := range Maps(p["Statement"]) {
			var actions []string
			for _, a := range AsList(st["Action"]) {
				if s, _ := a.(string); strings.HasPrefix(s, "dynamodb:") {
					actions = append(actions, s)
				}
			}
			if len(actions) == 0 {
				continue
			}
			tables := map[string]bool{}
			for _, r := range AsList(st["Resource"]) {
				m, _ := r.(map[string]any)
				switch {
				case m["Fn::GetAtt"] != nil:
					parts, _ := m["Fn::GetAtt"].([]any)
					if len(parts) == 2 && parts[1] == "Arn" {
						tables[fmt.Sprint(parts[0])] = true
						continue
					}
				case m["Fn::Sub"] != nil:
					sub, _ := m["Fn::Sub"].(string)
					if id, ok := strings.CutSuffix(strings.TrimPrefix(sub, "${"), ".Arn}/index/*"); ok && strings.HasPrefix(sub, "${") {
						tables[id] = true
						continue
					}
				}
				t.Errorf("%s: DynamoDB statement on %v, not a table's ARN or its indexes", name, r)
			}
			if len(tables) != 1 {
				t.Errorf("%s: a DynamoDB statement on %d tables, want one (%v)", name, len(tables), st)
			}
			for table := range tables {
				out[table] = append(out[table], actions...)
			}
		}
	}
	return out
}

// AsList is v as a list: a YAML list, or a single value.
func AsList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}
