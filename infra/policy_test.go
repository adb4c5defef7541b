package infra_test

// Policy checks over the expanded templates: template.yaml as the SAM translator turns it
// into CloudFormation (scripts/expand-template.py, with the translator cfn-lint ships),
// and the fleet stacks as they are. Each rule is a function from a template to the
// violations it finds; each has a negative case under testdata/policy that breaks it.
// The media fleet's own rules (no pinned DesiredCount, Redis AUTH, TURN's listener,
// livekit-server's stop timeout) are checked once, in fleet_rules_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/infra/cfn"
)

// policyTemplates are the templates the policy tests read: the real ones and the cases
// under testdata/policy.
func policyTemplates(t *testing.T) []string {
	t.Helper()
	paths := []string{filepath.Join("..", "template.yaml")}
	infra, _ := filepath.Glob("*.yaml")
	cases, _ := filepath.Glob(filepath.Join("testdata", "policy", "*.yaml"))
	return slices.Concat(paths, infra, cases)
}

var (
	expandOnce sync.Once
	expanded   map[string]*cfn.Template
	expandErr  error
)

// expand returns the template at path as CloudFormation deploys it. Every template is
// expanded in one run of the script (the translator takes seconds to load).
func expand(t *testing.T, path string) *cfn.Template {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required in CI (it expands the SAM templates)")
		}
		t.Skip("python3 is not installed")
	}
	expandOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		var stderr bytes.Buffer
		args := append([]string{filepath.Join("..", "scripts", "expand-template.py")}, policyTemplates(t)...)
		cmd := exec.CommandContext(ctx, "python3", args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			expandErr = fmt.Errorf("expand-template.py: %v\n%s", err, stderr.String())
			return
		}
		expandErr = json.Unmarshal(out, &expanded)
	})
	if expandErr != nil {
		if strings.Contains(expandErr.Error(), "ModuleNotFoundError") && os.Getenv("CI") != "true" {
			t.Skipf("the SAM translator is not installed: %v", expandErr)
		}
		t.Fatal(expandErr)
	}
	tpl, ok := expanded[path]
	if !ok {
		t.Fatalf("%s was not expanded", path)
	}
	return tpl
}

// rule is one policy: the violations it finds in a template.
type rule struct {
	name  string
	check func(tpl *cfn.Template) []string
}

var rules = []rule{
	{name: "function log groups", check: functionLogGroups},
	{name: "stream on-failure destination", check: streamOnFailure},
	{name: "sqs visibility timeout", check: sqsVisibility},
	{name: "sqs mapping failures and concurrency", check: sqsMappings},
	{name: "dead-letter queue alarms", check: deadLetterAlarms},
	{name: "noecho allowed pattern", check: noEchoPatterns},
	{name: "dynamodb deletion protection", check: tableDeletionProtection},
}

// The real templates pass every rule.
func TestPolicies(t *testing.T) {
	for _, path := range policyTemplates(t) {
		if strings.HasPrefix(path, "testdata") {
			continue
		}
		tpl := expand(t, path)
		for _, r := range rules {
			t.Run(filepath.Base(path)+"/"+r.name, func(t *testing.T) {
				for _, v := range r.check(tpl) {
					t.Error(v)
				}
			})
		}
	}
}

// Each rule's negative case breaks that rule (and the rule finds it); the good case of
// the same shape passes.
func TestPolicyNegativeCases(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			base := strings.ReplaceAll(r.name, " ", "-")
			bad := filepath.Join("testdata", "policy", base+".bad.yaml")
			good := filepath.Join("testdata", "policy", base+".good.yaml")
			if got := r.check(expand(t, bad)); len(got) == 0 {
				t.Errorf("%s: no violation found, want the rule to fail it", bad)
			} else {
				t.Logf("%s: %v", bad, got)
			}
			if got := r.check(expand(t, good)); len(got) != 0 {
				t.Errorf("%s: %v, want none", good, got)
			}
		})
	}
}

// --- helpers over the template's values ------------------------------------------------

func str(v any) string { s, _ := v.(string); return s }

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func arr(v any) []any { a, _ := v.([]any); return a }

// refTo returns the logical id v refers to: {"Ref": X} or {"Fn::GetAtt": [X, attr]}
// (attr "" matches any attribute).
func refTo(v any, attr string) string {
	m := obj(v)
	if r := str(m["Ref"]); r != "" && attr == "" {
		return r
	}
	ga := m["Fn::GetAtt"]
	if s := str(ga); s != "" {
		ga = []any{strings.SplitN(s, ".", 2)[0], strings.SplitN(s+".", ".", 2)[1]}
	}
	if a := arr(ga); len(a) == 2 && (attr == "" || strings.TrimSuffix(str(a[1]), ".") == attr) {
		return str(a[0])
	}
	return ""
}

// resolve reads a number that is a literal or a parameter's default.
func resolve(tpl *cfn.Template, v any) (float64, bool) {
	if n, ok := num(v); ok {
		return n, true
	}
	if p := str(obj(v)["Ref"]); p != "" {
		return num(tpl.Parameters[p]["Default"])
	}
	// Fn::FindInMap [map, key, attribute], the key a literal or a parameter's default.
	if args, ok := obj(v)["Fn::FindInMap"].([]any); ok && len(args) == 3 {
		key := str(args[1])
		if p := str(obj(args[1])["Ref"]); p != "" {
			key = fmt.Sprint(tpl.Parameters[p]["Default"])
		}
		if row, ok := tpl.Mappings[str(args[0])][key].(map[string]any); ok {
			return num(row[str(args[2])])
		}
	}
	return 0, false
}

func sortedIDs[T any](m map[string]T) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// --- the rules ---------------------------------------------------------------------------

// functionLogGroups: every function logs to a log group of the template that has a
// retention: its LoggingConfig.LogGroup, or one named /aws/lambda/<function>.
func functionLogGroups(tpl *cfn.Template) []string {
	groups := tpl.ResourcesOfType("AWS::Logs::LogGroup")
	byFunction := map[string]cfn.Resource{}
	for _, g := range groups {
		name := g.Properties["LogGroupName"]
		if sub := str(obj(name)["Fn::Sub"]); strings.HasPrefix(sub, "/aws/lambda/${") {
			byFunction[strings.TrimSuffix(strings.TrimPrefix(sub, "/aws/lambda/${"), "}")] = g
		}
	}
	var out []string
	fns := tpl.ResourcesOfType("AWS::Lambda::Function")
	for _, id := range sortedIDs(fns) {
		g, ok := groups[refTo(obj(fns[id].Properties["LoggingConfig"])["LogGroup"], "")]
		if !ok {
			g, ok = byFunction[id]
		}
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("function %s has no log group of its own (Lambda would create one that never expires)", id))
		case g.Properties["RetentionInDays"] == nil:
			out = append(out, fmt.Sprintf("function %s's log group has no RetentionInDays", id))
		}
	}
	return out
}

// mappings returns the event source mappings whose source is of the given kind: "sqs"
// (a queue of the template or an SQS ARN) or "stream" (anything with a StartingPosition).
func mappings(tpl *cfn.Template, kind string) map[string]cfn.Resource {
	out := map[string]cfn.Resource{}
	for id, m := range tpl.ResourcesOfType("AWS::Lambda::EventSourceMapping") {
		src := m.Properties["EventSourceArn"]
		q := tpl.Resources[refTo(src, "Arn")].Type == "AWS::SQS::Queue" || strings.Contains(str(src), ":sqs:")
		if (kind == "sqs") == q && (q || m.Properties["StartingPosition"] != nil) {
			out[id] = m
		}
	}
	return out
}

// streamOnFailure: a stream mapping keeps what it gives up on.
func streamOnFailure(tpl *cfn.Template) []string {
	var out []string
	ms := mappings(tpl, "stream")
	for _, id := range sortedIDs(ms) {
		dest := obj(obj(ms[id].Properties["DestinationConfig"])["OnFailure"])["Destination"]
		if dest == nil {
			out = append(out, fmt.Sprintf("stream mapping %s has no on-failure destination: exhausted records are dropped", id))
		}
	}
	return out
}

// functionTimeout is a function's Timeout (Lambda's default is 3 s).
func functionTimeout(tpl *cfn.Template, fn string) float64 {
	if t, ok := resolve(tpl, tpl.Resources[fn].Properties["Timeout"]); ok {
		return t
	}
	return 3
}

// sqsVisibility: a queue's visibility timeout is at least six times its consumer's
// timeout, as Lambda advises, so a message is not offered again while being processed.
func sqsVisibility(tpl *cfn.Template) []string {
	var out []string
	ms := mappings(tpl, "sqs")
	for _, id := range sortedIDs(ms) {
		m := ms[id]
		q := refTo(m.Properties["EventSourceArn"], "Arn")
		vis, ok := resolve(tpl, tpl.Resources[q].Properties["VisibilityTimeout"])
		if !ok {
			vis = 30
		}
		fn := refTo(m.Properties["FunctionName"], "")
		if t := functionTimeout(tpl, fn); vis < 6*t {
			out = append(out, fmt.Sprintf("queue %s: VisibilityTimeout %v is under 6 x %s's timeout %v", q, vis, fn, t))
		}
	}
	return out
}

// sqsMappings: an SQS mapping reports failed messages one by one and bounds its concurrency.
func sqsMappings(tpl *cfn.Template) []string {
	var out []string
	ms := mappings(tpl, "sqs")
	for _, id := range sortedIDs(ms) {
		p := ms[id].Properties
		if !slices.Contains(arr(p["FunctionResponseTypes"]), any("ReportBatchItemFailures")) {
			out = append(out, fmt.Sprintf("SQS mapping %s lacks ReportBatchItemFailures: one failure retries the whole batch", id))
		}
		if _, ok := resolve(tpl, obj(p["ScalingConfig"])["MaximumConcurrency"]); !ok {
			out = append(out, fmt.Sprintf("SQS mapping %s has no ScalingConfig.MaximumConcurrency", id))
		}
	}
	return out
}

// deadLetterAlarms: every queue where failures wait (a redrive target, an EventBridge
// target's dead-letter queue, a mapping's on-failure destination) has an alarm on its
// depth that notifies someone.
func deadLetterAlarms(tpl *cfn.Template) []string {
	dlqs := map[string]string{}
	for id, q := range tpl.ResourcesOfType("AWS::SQS::Queue") {
		if d := refTo(obj(q.Properties["RedrivePolicy"])["deadLetterTargetArn"], "Arn"); d != "" {
			dlqs[d] = "dead-letter queue of " + id
		}
	}
	for id, r := range tpl.ResourcesOfType("AWS::Events::Rule") {
		for _, tg := range arr(r.Properties["Targets"]) {
			if d := refTo(obj(obj(tg)["DeadLetterConfig"])["Arn"], "Arn"); d != "" {
				dlqs[d] = "dead-letter queue of rule " + id
			}
		}
	}
	for id, m := range tpl.ResourcesOfType("AWS::Lambda::EventSourceMapping") {
		if d := refTo(obj(obj(m.Properties["DestinationConfig"])["OnFailure"])["Destination"], "Arn"); d != "" {
			dlqs[d] = "on-failure queue of " + id
		}
	}
	watched := map[string]bool{}
	for _, a := range tpl.ResourcesOfType("AWS::CloudWatch::Alarm") {
		if str(a.Properties["Namespace"]) != "AWS/SQS" || len(arr(a.Properties["AlarmActions"])) == 0 {
			continue
		}
		for _, d := range arr(a.Properties["Dimensions"]) {
			if str(obj(d)["Name"]) == "QueueName" {
				watched[refTo(obj(d)["Value"], "QueueName")] = true
			}
		}
	}
	var out []string
	for _, q := range sortedIDs(dlqs) {
		if tpl.Resources[q].Type != "AWS::SQS::Queue" {
			out = append(out, fmt.Sprintf("%s (%s) is not a queue of this template", q, dlqs[q]))
		} else if !watched[q] {
			out = append(out, fmt.Sprintf("%s (%s) has no depth alarm with an action", q, dlqs[q]))
		}
	}
	return out
}

// noEchoPatterns: a NoEcho parameter says what it accepts.
func noEchoPatterns(tpl *cfn.Template) []string {
	var out []string
	for _, name := range sortedIDs(tpl.Parameters) {
		p := tpl.Parameters[name]
		if (p["NoEcho"] == true || p["NoEcho"] == "true") && str(p["AllowedPattern"]) == "" {
			out = append(out, fmt.Sprintf("NoEcho parameter %s has no AllowedPattern", name))
		}
	}
	return out
}

// tableDeletionProtection: a DynamoDB table cannot be deleted by a stack change or by hand
// without first turning protection off.
func tableDeletionProtection(tpl *cfn.Template) []string {
	var out []string
	tables := tpl.ResourcesOfType("AWS::DynamoDB::Table")
	for _, id := range sortedIDs(tables) {
		if p := tables[id].Properties["DeletionProtectionEnabled"]; p != true && p != "true" {
			out = append(out, fmt.Sprintf("table %s has no DeletionProtectionEnabled", id))
		}
	}
	return out
}
