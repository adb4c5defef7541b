package functions_test

// Static checks of template.yaml against the code: routes, function folders, build
// targets, table shapes, grants and the authorizer; plus cfn-lint, the deployable
// cross-compile and the functions' import graph.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/functions/functiontest"
	"github.com/bridgeline/bridgeline/functions/internal/grantgen/grants"
	"github.com/bridgeline/bridgeline/functions/internal/wire"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
)

// routeTable is the API's whole route table, as the local stack serves it.
func routeTable(t *testing.T) []httpapi.Route {
	t.Helper()
	routes, err := wire.RouteTable()
	if err != nil {
		t.Fatal(err)
	}
	return routes
}

// apiEvent is a function's API event in template.yaml: a route of the public HttpApi,
// or (API "InternalApi") of the private API the fleets reach the receivers through.
type apiEvent struct {
	Method, Path string
	Auth         string // "" for the default authorizer, NONE for public routes
	API          string // "HttpApi" or "InternalApi"
}

func apiEvents(t *testing.T, name string) []apiEvent {
	t.Helper()
	var out []apiEvent
	evs, _ := functiontest.Resource(t, name).Properties["Events"].(map[string]any)
	for _, e := range evs {
		e := e.(map[string]any)
		p, _ := e["Properties"].(map[string]any)
		var ev apiEvent
		switch e["Type"] {
		case "HttpApi":
			ev = apiEvent{Method: fmt.Sprint(p["Method"]), Path: fmt.Sprint(p["Path"]), API: "HttpApi"}
			if a, ok := p["Auth"].(map[string]any); ok {
				ev.Auth = fmt.Sprint(a["Authorizer"])
			}
			if ref, _ := p["ApiId"].(map[string]any)["Ref"].(string); ref != "HttpApi" {
				t.Errorf("%s: HttpApi event ApiId = %v, want !Ref HttpApi", name, p["ApiId"])
			}
		case "Api":
			ev = apiEvent{Method: fmt.Sprint(p["Method"]), Path: fmt.Sprint(p["Path"]), API: "InternalApi", Auth: "NONE"}
			if ref, _ := p["RestApiId"].(map[string]any)["Ref"].(string); ref != "InternalApi" {
				t.Errorf("%s: Api event RestApiId = %v, want !Ref InternalApi", name, p["RestApiId"])
			}
			if _, ok := p["Auth"]; ok {
				t.Errorf("%s: Api event has Auth %v; InternalApi has no authorizer (its resource policy admits the fleets' VPC endpoint only)", name, p["Auth"])
			}
		default:
			continue
		}
		out = append(out, ev)
	}
	return out
}

// internalRoute: the receivers of the fleets (LiveKit webhooks, platform notifications,
// persona reports, transfers and tool calls) are under /internal/.
func internalRoute(pattern string) bool { return strings.HasPrefix(pattern, "/internal/") }

// TestEveryRouteHasOneFunction: each route of the route table is served by the function
// of its name, whose template resource carries exactly that route; each function folder
// has a template resource; nothing else is routed.
func TestEveryRouteHasOneFunction(t *testing.T) {
	tpl := functiontest.Template(t)
	routed := map[string]bool{}
	for _, r := range routeTable(t) {
		key := r.Method + " " + r.Pattern
		if routed[key] {
			t.Errorf("route %s appears twice in the route table", key)
		}
		routed[key] = true
		evs := apiEvents(t, r.Function)
		want := apiEvent{Method: r.Method, Path: r.Pattern, API: "HttpApi"}
		if r.Public {
			want.Auth = "NONE"
		}
		if internalRoute(r.Pattern) {
			want.API = "InternalApi"
		}
		if len(evs) != 1 || evs[0] != want {
			t.Errorf("%s serves %s: template events %+v, want exactly %+v", r.Function, key, evs, want)
		}
		if _, err := os.Stat(filepath.Join(r.Function, "main.go")); err != nil {
			t.Errorf("route %s: no functions/%s/main.go", key, r.Function)
		}
	}
	names := functiontest.Names(t)
	for _, name := range names {
		// One route or one event source each; the authorizer is API Gateway's own.
		evs, _ := functiontest.Resource(t, name).Properties["Events"].(map[string]any)
		if want := 1; name == "authorizer" && len(evs) != 0 || name != "authorizer" && len(evs) != want {
			t.Errorf("%s has %d events in template.yaml, want one route or event source", name, len(evs))
		}
	}
	for id, r := range tpl.ResourcesOfType("AWS::Serverless::Function") {
		code, _ := r.Properties["CodeUri"].(string)
		name := strings.TrimPrefix(code, "functions/")
		if !slices.Contains(names, name) || functiontest.LogicalID(name) != id {
			t.Errorf("%s: CodeUri %q is not a functions/<name> folder named like the resource", id, code)
		}
		if md := r.Metadata; md["BuildMethod"] != "makefile" || md["ContextPath"] != "." || md["ProjectRootDirectory"] != "." {
			t.Errorf("%s: Metadata %v, want BuildMethod makefile with ContextPath and ProjectRootDirectory .", id, md)
		}
	}
	// Every API route the template declares is in the route table.
	for _, name := range names {
		for _, ev := range apiEvents(t, name) {
			if !routed[ev.Method+" "+ev.Path] {
				t.Errorf("%s: template routes %s %s, which the route table does not have", name, ev.Method, ev.Path)
			}
		}
	}
}

// localOnly are openapi.yaml's routes that only the local stack serves: the sim's own
// API and page (on AWS the platform gateway serves them, cmd/platform-gateway).
var localOnly = []string{"/sim/"}

// TestOpenAPIRoutesHaveFunctions: every operation of openapi.yaml (the customer contract)
// and openapi-internal.yaml (the receivers and the sim) is a route with its function, and
// every /v1 route is in the customer contract.
func TestOpenAPIRoutesHaveFunctions(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	customer := map[string]bool{}
	for _, file := range []string{"../openapi.yaml", "../openapi-internal.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var one struct {
			Paths map[string]map[string]any `yaml:"paths"`
		}
		if err := yaml.Unmarshal(b, &one); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if doc.Paths == nil {
			doc.Paths = map[string]map[string]any{}
		}
		for path, ops := range one.Paths {
			if _, dup := doc.Paths[path]; dup {
				t.Errorf("%s: %s is in both files", file, path)
			}
			doc.Paths[path] = ops
			if file == "../openapi.yaml" {
				customer[path] = true
			}
		}
	}
	routes := map[string]string{}
	for _, r := range routeTable(t) {
		routes[r.Method+" "+r.Pattern] = r.Function
	}
	inContract := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			m := strings.ToUpper(method)
			if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut}, m) {
				continue
			}
			key := m + " " + path
			if slices.ContainsFunc(localOnly, func(p string) bool { return strings.HasPrefix(path, p) }) {
				continue
			}
			inContract[key] = true
			if fn, ok := routes[key]; !ok {
				t.Errorf("the contract has %s, which no function serves", key)
			} else if len(apiEvents(t, fn)) != 1 {
				t.Errorf("%s (%s) has %d API events in template.yaml, want 1", key, fn, len(apiEvents(t, fn)))
			}
		}
	}
	if len(inContract) == 0 {
		t.Fatal("openapi.yaml lists no operations")
	}
	for key := range routes {
		if strings.Contains(key, " /v1/") && !inContract[key] {
			t.Errorf("route %s is not in openapi.yaml", key)
		}
		if path := key[strings.Index(key, " ")+1:]; strings.Contains(key, " /v1/") != customer[path] {
			t.Errorf("route %s: a /v1 route belongs in openapi.yaml, any other in openapi-internal.yaml", key)
		}
	}
}

// TestBuildTargets: build.mk has the build-<LogicalId> target SAM runs for every function,
// building that function's own folder.
func TestBuildTargets(t *testing.T) {
	b, err := os.ReadFile("../build.mk")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^build-(\w+): ; \$\(call sam-build,([\w-]+)\)$`)
	targets := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		targets[m[1]] = m[2]
	}
	for id, r := range functiontest.Template(t).ResourcesOfType("AWS::Serverless::Function") {
		want := strings.TrimPrefix(fmt.Sprint(r.Properties["CodeUri"]), "functions/")
		if got, ok := targets[id]; !ok || got != want {
			t.Errorf("build.mk: build-%s builds %q, want functions/%s", id, got, want)
		}
		delete(targets, id)
	}
	for id := range targets {
		t.Errorf("build.mk: build-%s has no function in template.yaml", id)
	}
}

// TestTablesMatchTheStore: template.yaml declares each table of dynamo.Definitions with
// the same keys, indexes, TTL and stream, on-demand, with point-in-time recovery.
func TestTablesMatchTheStore(t *testing.T) {
	tpl := functiontest.Template(t)
	declared := tpl.ResourcesOfType("AWS::DynamoDB::Table")
	for _, d := range dynamo.Definitions {
		id := d.Table.LogicalID()
		if d.LocalOnly {
			if _, ok := declared[id]; ok {
				t.Errorf("template.yaml declares %s, which only the local stack uses", id)
			}
			continue
		}
		r, ok := declared[id]
		if !ok {
			t.Errorf("template.yaml has no table %s for %s", id, d.Table)
			continue
		}
		delete(declared, id)
		want := d.CreateTableInput("")
		p := r.Properties
		if p["BillingMode"] != "PAY_PER_REQUEST" {
			t.Errorf("%s: BillingMode %v, want PAY_PER_REQUEST", id, p["BillingMode"])
		}
		if pitr, _ := p["PointInTimeRecoverySpecification"].(map[string]any); pitr["PointInTimeRecoveryEnabled"] != true {
			t.Errorf("%s: point-in-time recovery is not enabled", id)
		}
		var attrs []string
		for _, a := range want.AttributeDefinitions {
			attrs = append(attrs, *a.AttributeName+":"+string(a.AttributeType))
		}
		var gotAttrs []string
		for _, a := range functiontest.Maps(p["AttributeDefinitions"]) {
			gotAttrs = append(gotAttrs, fmt.Sprintf("%v:%v", a["AttributeName"], a["AttributeType"]))
		}
		sort.Strings(gotAttrs)
		if fmt.Sprint(gotAttrs) != fmt.Sprint(attrs) {
			t.Errorf("%s: attributes %v, want %v", id, gotAttrs, attrs)
		}
		keys := func(ks any) string {
			var out []string
			for _, k := range functiontest.Maps(ks) {
				out = append(out, fmt.Sprintf("%v:%v", k["AttributeName"], k["KeyType"]))
			}
			return strings.Join(out, ",")
		}
		var wantKeys []string
		for _, k := range want.KeySchema {
			wantKeys = append(wantKeys, *k.AttributeName+":"+string(k.KeyType))
		}
		if got := keys(p["KeySchema"]); got != strings.Join(wantKeys, ",") {
			t.Errorf("%s: key schema %s, want %s", id, got, strings.Join(wantKeys, ","))
		}
		gotIdx := map[string]string{}
		for _, ix := range functiontest.Maps(p["GlobalSecondaryIndexes"]) {
			proj, _ := ix["Projection"].(map[string]any)
			gotIdx[fmt.Sprint(ix["IndexName"])] = keys(ix["KeySchema"]) + " " + fmt.Sprint(proj["ProjectionType"])
		}
		wantIdx := map[string]string{}
		for _, ix := range want.GlobalSecondaryIndexes {
			var ks []string
			for _, k := range ix.KeySchema {
				ks = append(ks, *k.AttributeName+":"+string(k.KeyType))
			}
			wantIdx[*ix.IndexName] = strings.Join(ks, ",") + " ALL"
		}
		if fmt.Sprint(gotIdx) != fmt.Sprint(wantIdx) {
			t.Errorf("%s: indexes %v, want %v", id, gotIdx, wantIdx)
		}
		ttl, _ := p["TimeToLiveSpecification"].(map[string]any)
		if d.TTLAttribute != "" && (ttl["AttributeName"] != d.TTLAttribute || ttl["Enabled"] != true) {
			t.Errorf("%s: TTL %v, want enabled on %s", id, ttl, d.TTLAttribute)
		}
		if d.TTLAttribute == "" && ttl != nil {
			t.Errorf("%s: TTL %v, but the store sets none", id, ttl)
		}
		stream, _ := p["StreamSpecification"].(map[string]any)
		if d.Stream != (stream != nil) || (d.Stream && stream["StreamViewType"] != "NEW_IMAGE") {
			t.Errorf("%s: stream %v, want stream %v (NEW_IMAGE)", id, stream, d.Stream)
		}
	}
	for id := range declared {
		t.Errorf("template.yaml declares table %s, which the store does not use", id)
	}
}

// TestGrantsMatchEnvironmentAndRoutes: each function is granted exactly the tables
// wire.Tables says it uses, and given the name of each (TABLE_*); every function has an
// entry, and the map names no function that does not exist. The runtime test checks the
// grants against what each function really does.
func TestGrantsMatchEnvironmentAndRoutes(t *testing.T) {
	byID := map[string]dynamo.Table{}
	for _, tb := range dynamo.AllTables {
		byID[tb.LogicalID()] = tb
	}
	names := functiontest.Names(t)
	for name := range wire.Tables {
		if !slices.Contains(names, name) {
			t.Errorf("wire.Tables names %s, which is no function", name)
		}
	}
	for _, r := range routeTable(t) {
		if _, ok := wire.Tables[r.Function]; !ok {
			t.Errorf("route %s %s: function %s has no entry in wire.Tables", r.Method, r.Pattern, r.Function)
		}
	}
	for _, name := range names {
		uses, ok := wire.Tables[name]
		if !ok {
			t.Errorf("%s has no entry in wire.Tables", name)
		}
		want := map[string]bool{}
		for _, tb := range uses {
			want[tb.LogicalID()] = true
		}
		granted := map[string]bool{}
		for table, actions := range functiontest.DynamoGrants(t, name) {
			granted[table] = true
			if want := wire.Actions(name, byID[table]); !slices.Equal(actions, want) {
				t.Errorf("%s: granted %v on %s, but wire.Actions says %v (go run ./functions/internal/grantgen)", name, actions, table, want)
			}
		}
		env := map[string]bool{}
		functiontest.EachIn(functiontest.Resource(t, name).Properties, "Environment", "Variables", func(k string, v any) {
			if strings.HasPrefix(k, "TABLE_") {
				ref, _ := v.(map[string]any)["Ref"].(string)
				if tb, ok := byID[ref]; !ok || tb.EnvVar() != k {
					t.Errorf("%s: %s = !Ref %s, want the table named by the variable", name, k, ref)
				}
				env[ref] = true
			}
		})
		if fmt.Sprint(env) != fmt.Sprint(granted) {
			t.Errorf("%s: TABLE_* variables for %v but grants on %v", name, env, granted)
		}
		if fmt.Sprint(granted) != fmt.Sprint(want) {
			t.Errorf("%s: granted %v, but wire.Tables says it uses %v", name, granted, want)
		}
	}
}

// TestGrantsAreGenerated: template.yaml's DynamoDB grants are exactly what grantgen
// writes from wire.Tables and wire.Writes: explicit actions per table, no SAM DynamoDB
// policy template (DynamoDBCrudPolicy grants Scan and DeleteItem to every writer).
func TestGrantsAreGenerated(t *testing.T) {
	b, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := grants.Rewrite(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(b) {
		t.Error("template.yaml's DynamoDB grants differ from wire.Tables and wire.Writes: run go run ./functions/internal/grantgen")
	}
	for _, name := range functiontest.Names(t) {
		for _, p := range functiontest.Policies(t, name) {
			for kind := range p {
				if strings.HasPrefix(kind, "DynamoDB") {
					t.Errorf("%s: %s: grant DynamoDB actions through wire.Writes instead", name, kind)
				}
			}
		}
		for table, actions := range functiontest.DynamoGrants(t, name) {
			for _, a := range actions {
				if a == "dynamodb:Scan" || a == "dynamodb:DeleteTable" || strings.HasSuffix(a, "*") {
					t.Errorf("%s: %s on %s", name, a, table)
				}
			}
		}
	}
}

// TestTemplateShape: the settings the design card asks for.
func TestTemplateShape(t *testing.T) {
	tpl := functiontest.Template(t)
	fn, _ := tpl.Globals["Function"].(map[string]any)
	if fn["Runtime"] != "provided.al2023" || fmt.Sprint(fn["Architectures"]) != "[arm64]" || fn["Handler"] != "bootstrap" {
		t.Errorf("Globals.Function = %v, want provided.al2023 on arm64 with handler bootstrap", fn)
	}
	api := tpl.Resources["HttpApi"]
	if api.Type != "AWS::Serverless::HttpApi" {
		t.Fatalf("HttpApi is %q", api.Type)
	}
	auth, _ := api.Properties["Auth"].(map[string]any)
	if auth["DefaultAuthorizer"] != "ApiKeyAuthorizer" {
		t.Errorf("HttpApi default authorizer = %v", auth["DefaultAuthorizer"])
	}
	az, _ := auth["Authorizers"].(map[string]any)["ApiKeyAuthorizer"].(map[string]any)
	arn, _ := az["FunctionArn"].(map[string]any)["Fn::GetAtt"].([]any)
	id, _ := az["Identity"].(map[string]any)
	if len(arn) != 2 || arn[0] != "AuthorizerFunction" || az["AuthorizerPayloadFormatVersion"] != "2.0" ||
		az["EnableSimpleResponses"] != true || fmt.Sprint(id["Headers"]) != "[Authorization]" {
		t.Errorf("ApiKeyAuthorizer = %v, want the authorizer function, payload 2.0, simple responses, keyed by Authorization", az)
	}
	// The cache spares the authorizer most calls, but it is also how long a revoked key
	// keeps working: issue 10 allows 60 s.
	if ttl, _ := id["ReauthorizeEvery"].(float64); ttl < 1 || ttl > 60 {
		t.Errorf("authorizer results cached %v seconds, want 1 to 60", id["ReauthorizeEvery"])
	}
	if r := tpl.Resources["LiveKitCredentials"]; r.Type != "AWS::SecretsManager::Secret" {
		t.Errorf("LiveKitCredentials is %q, want a Secrets Manager secret", r.Type)
	}
	if p := tpl.Parameters["LiveKitAPISecret"]; p["NoEcho"] != true {
		t.Errorf("LiveKitAPISecret parameter = %v, want NoEcho", p)
	}
	for _, name := range []string{"ApiURL", "LiveKitWebhookURL", "LiveKitCredentialsArn", "EventBusName"} {
		if _, ok := tpl.Outputs[name]; !ok {
			t.Errorf("no output %s", name)
		}
	}
	// Functions never get the LiveKit secret in their configuration: they read it from
	// Secrets Manager.
	for _, name := range functiontest.Names(t) {
		functiontest.EachIn(functiontest.Resource(t, name).Properties, "Environment", "Variables", func(k string, v any) {
			if b, _ := json.Marshal(v); strings.Contains(string(b), "LiveKitAPISecret") {
				t.Errorf("%s: %s carries the LiveKit API secret", name, k)
			}
		})
	}
}

// TestCFNLint runs cfn-lint (with AWS's SAM translator) on template.yaml and infra/.
func TestCFNLint(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: cfn-lint takes about a minute; make test runs it")
	}
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("cfn-lint is required in CI")
		}
		t.Skip("cfn-lint not installed")
	}
	files := []string{"template.yaml"}
	infra, _ := filepath.Glob("../infra/*.yaml")
	for _, f := range infra {
		files = append(files, strings.TrimPrefix(f, "../"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, files...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("cfn-lint %v: %v\n%s", files, err, out)
	}
}

// TestDeployableBuild compiles every function, and every package it imports, as Lambda
// runs it: linux/arm64, no cgo. `go list -export` compiles each package (a function's
// main too) and fails on a compile error or on a package that builds only with cgo; it
// links nothing. Linking the 80-odd binaries too (`go build ./...`) took over three
// minutes of CI for link errors pure Go does not have; e2e/lambda links and runs them
// for the host, and build.mk links them for arm64 at deploy.
func TestDeployableBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compile skipped in -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-export", "-trimpath", "-tags=lambda.norpc", "-f", "{{.ImportPath}}", "./...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go list -export ./functions/...: %v\n%s", err, stderr)
	}
	// The check compiled something: every function's package was listed.
	if n := strings.Count(string(out), "\n"); n < 50 {
		t.Fatalf("go list -export listed %d packages, want every function's: the check saw nothing\n%s", n, out)
	}
}

// forbidden are packages no function may link: WebRTC and media stacks, the LiveKit
// client SDK (functions talk to LiveKit through github.com/livekit/protocol), the media
// fleet, and the local stack's SQLite store.
var forbidden = []string{
	"github.com/pion/",
	"github.com/livekit/server-sdk-go",
	"github.com/livekit/livekit-server",
	"github.com/livekit/mediatransportutil",
	"github.com/bridgeline/bridgeline/mediafleet",
	"github.com/bridgeline/bridgeline/cmd",
	"github.com/bridgeline/bridgeline/shared/store/sqlite",
	"modernc.org/sqlite",
}

// TestImportGraph: no function imports a forbidden package, and no package a function
// imports outside the standard library has cgo files.
func TestImportGraph(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var roots []string
	for _, n := range functiontest.Names(t) {
		roots = append(roots, "github.com/bridgeline/bridgeline/functions/"+n)
	}
	for _, cgo := range []string{"0", "1"} {
		args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}} {{join .Imports \",\"}}"}, roots...)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOOS=linux", "GOARCH=arm64")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps: %v", err)
		}
		imports := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var path, std, deps string
			var ncgo int
			fmt.Sscan(line, &path, &std, &ncgo, &deps)
			if deps != "" {
				imports[path] = strings.Split(deps, ",")
			}
			if std == "false" && ncgo > 0 {
				t.Errorf("a function imports %s, which has cgo files (CGO_ENABLED=%s)", path, cgo)
			}
		}
		if len(imports) < 100 {
			t.Fatalf("go list -deps listed only %d packages: the check saw nothing", len(imports))
		}
		// Walk the graph from the functions, remembering who imported what.
		seen := map[string]string{} // package -> the package that imported it
		var queue []string
		for _, r := range roots {
			seen[r] = ""
			queue = append(queue, r)
		}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, d := range imports[p] {
				if _, ok := seen[d]; ok {
					continue
				}
				seen[d] = p
				queue = append(queue, d)
			}
		}
		for pkg, by := range seen {
			for _, f := range forbidden {
				if strings.HasPrefix(pkg, f) {
					t.Errorf("a function imports %s (imported by %s)", pkg, by)
				}
			}
		}
	}
}

// TestRulesRefuseTheLiveKitSecretAsReportSecret evaluates the template's Rules as
// CloudFormation does before a deploy (Ref of a parameter, Fn::Equals, Fn::Not, Fn::And,
// Fn::Or): a PersonaReportSecret equal to LiveKitAPISecret fails an assertion, so the
// stack is not created; distinct secrets pass every rule.
func TestRulesRefuseTheLiveKitSecretAsReportSecret(t *testing.T) {
	tpl := functiontest.Template(t)
	params := map[string]string{}
	for name, p := range tpl.Parameters {
		if d, ok := p["Default"]; ok {
			params[name] = fmt.Sprint(d)
		}
	}
	params["AWS::Region"], params["AlarmEmail"] = "eu-west-1", "oncall@example.com"
	const shared = "LiveKitSecretOfThirtyTwoOrMoreLetters0123"
	failing := func(reportSecret string) []string {
		params["LiveKitAPISecret"], params["PersonaReportSecret"] = shared, reportSecret
		var failed []string
		for name, rule := range tpl.Rules {
			if cond, ok := rule["RuleCondition"]; ok && !evalRule(t, cond, params) {
				continue
			}
			for _, a := range functiontest.AsList(rule["Assertions"]) {
				if m, _ := a.(map[string]any); !evalRule(t, m["Assert"], params) {
					failed = append(failed, name)
				}
			}
		}
		return failed
	}
	if got := failing(shared); len(got) == 0 {
		t.Error("Rules pass with PersonaReportSecret equal to LiveKitAPISecret; want an assertion to fail")
	}
	if got := failing("another-report-secret-of-32-or-more-characters"); len(got) != 0 {
		t.Errorf("Rules %v fail with distinct secrets and an alarm address", got)
	}
}

// evalRule evaluates a rule condition or assertion over parameter values.
func evalRule(t *testing.T, v any, params map[string]string) bool {
	t.Helper()
	val := func(v any) string {
		if m, ok := v.(map[string]any); ok {
			if ref, ok := m["Ref"].(string); ok {
				return params[ref]
			}
		}
		return fmt.Sprint(v)
	}
	m, _ := v.(map[string]any)
	for fn, arg := range m {
		args := functiontest.AsList(arg)
		switch fn {
		case "Fn::Equals":
			return len(args) == 2 && val(args[0]) == val(args[1])
		case "Fn::Not":
			return len(args) == 1 && !evalRule(t, args[0], params)
		case "Fn::And", "Fn::Or":
			and := fn == "Fn::And"
			for _, a := range args {
				if evalRule(t, a, params) != and {
					return !and
				}
			}
			return and
		}
	}
	t.Fatalf("rule expression %v: not evaluated by this test", v)
	return false
}

// TestInternalReceiversOnlyOnThePrivateAPI (issue 22, finding 2): no /internal route is
// on the public HTTP API, where anyone on the internet could use up its throttle and
// have genuine reports, LiveKit webhooks and platform notifications answered 429. Each
// is a route of InternalApi, a PRIVATE REST API associated with the stack's execute-api
// VPC endpoint in the fleets' VPC, whose resource policy admits requests through that
// endpoint only; the endpoint takes HTTPS from the fleets' address range only; the
// outputs the fleets are configured from point at the private API.
func TestInternalReceiversOnlyOnThePrivateAPI(t *testing.T) {
	tpl := functiontest.Template(t)
	var internal int
	for _, r := range routeTable(t) {
		for _, ev := range apiEvents(t, r.Function) {
			if internalRoute(ev.Path) && ev.API != "InternalApi" {
				t.Errorf("%s: %s %s is on the public %s (anyone can flood it); want it on InternalApi only", r.Function, ev.Method, ev.Path, ev.API)
			}
			if !internalRoute(ev.Path) && ev.API == "InternalApi" {
				t.Errorf("%s: %s %s is on InternalApi, which is for /internal/ receivers only", r.Function, ev.Method, ev.Path)
			}
			if internalRoute(ev.Path) {
				internal++
			}
		}
	}
	if internal < 4 {
		t.Errorf("%d internal routes found in the template, want the LiveKit, sim and persona receivers", internal)
	}
	// The public API keeps no throttle settings for routes it no longer has.
	if rs, _ := tpl.Resources["HttpApi"].Properties["RouteSettings"].(map[string]any); len(rs) > 0 {
		for k := range rs {
			if strings.Contains(k, "/internal/") {
				t.Errorf("HttpApi RouteSettings still name %s", k)
			}
		}
	}

	api := tpl.Resources["InternalApi"]
	if api.Type != "AWS::Serverless::Api" {
		t.Fatalf("InternalApi is %q, want AWS::Serverless::Api (a REST API: only those can be private)", api.Type)
	}
	ec, _ := api.Properties["EndpointConfiguration"].(map[string]any)
	if ec["Type"] != "PRIVATE" || fmt.Sprint(ec["VPCEndpointIds"]) != "[map[Ref:InternalEndpoint]]" {
		t.Errorf("InternalApi EndpointConfiguration = %v, want PRIVATE, associated with InternalEndpoint", ec)
	}
	if _, ok := api.Properties["Auth"].(map[string]any)["DefaultAuthorizer"]; ok {
		t.Errorf("InternalApi has a default authorizer; the receivers verify their senders' signatures")
	}
	// The resource policy: one Allow, only through the endpoint; no statement admits
	// anyone else.
	stmts := functiontest.AsList(api.Properties["Auth"].(map[string]any)["ResourcePolicy"].(map[string]any)["CustomStatements"])
	var allows int
	for _, s := range stmts {
		st, _ := s.(map[string]any)
		if st["Effect"] != "Allow" {
			continue
		}
		allows++
		cond, _ := st["Condition"].(map[string]any)["StringEquals"].(map[string]any)
		if fmt.Sprint(cond["aws:SourceVpce"]) != "map[Ref:InternalEndpoint]" || st["Action"] != "execute-api:Invoke" {
			t.Errorf("InternalApi allows %v, want execute-api:Invoke only with aws:SourceVpce = InternalEndpoint", st)
		}
	}
	if allows != 1 {
		t.Errorf("InternalApi resource policy has %d Allow statements, want 1", allows)
	}
	for _, setting := range functiontest.AsList(api.Properties["MethodSettings"]) {
		m, _ := setting.(map[string]any)
		if m["ThrottlingRateLimit"] == nil || m["ThrottlingBurstLimit"] == nil {
			t.Errorf("InternalApi method setting %v has no throttle", m)
		}
	}

	ep := tpl.Resources["InternalEndpoint"]
	if ep.Type != "AWS::EC2::VPCEndpoint" || ep.Properties["VpcEndpointType"] != "Interface" ||
		fmt.Sprint(ep.Properties["ServiceName"]) != "map[Fn::Sub:com.amazonaws.${AWS::Region}.execute-api]" ||
		ep.Properties["PrivateDnsEnabled"] != false {
		t.Errorf("InternalEndpoint = %s %v, want an execute-api interface endpoint without private DNS (the fleets still reach public API names)", ep.Type, ep.Properties)
	}
	sg := tpl.Resources["InternalEndpointSecurityGroup"]
	for _, rule := range functiontest.AsList(sg.Properties["SecurityGroupIngress"]) {
		m, _ := rule.(map[string]any)
		if fmt.Sprint(m["CidrIp"]) != "map[Ref:FleetCidr]" || fmt.Sprint(m["FromPort"]) != "443" || fmt.Sprint(m["ToPort"]) != "443" {
			t.Errorf("InternalEndpointSecurityGroup ingress %v, want HTTPS from FleetCidr only", m)
		}
	}
	for _, name := range []string{"InternalURL", "LiveKitWebhookURL"} {
		sub, _ := tpl.Outputs[name]["Value"].(map[string]any)["Fn::Sub"].(string)
		if !strings.HasPrefix(sub, "https://${InternalApi}-${InternalEndpoint}.execute-api.") {
			t.Errorf("output %s = %v, want the private API's address through InternalEndpoint", name, tpl.Outputs[name]["Value"])
		}
	}
}
