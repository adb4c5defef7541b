package infra_test

// Checks of TURN's listener, of what keeps calls alive through deploys and scale-in (livekit-server's stop
// timeout against the longest session, the persona workers' drain inside Fargate's
// limit), of autoscaled counts the stacks must not pin, and of Redis AUTH. Each check is
// a function returning the problems it finds, run on the real templates (none) and on
// copies broken on purpose (at least one).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/bridgeline/bridgeline/infra/cfn"
)

// drainMargin is what a livekit-server drain needs beyond the longest session: a room
// closes departure_timeout (5 s) after its last participant leaves, the server looks for
// remaining rooms every few seconds, and the final webhooks go out.
const drainMargin = time.Minute

// fargateMaxStop is the longest stop timeout Fargate allows.
const fargateMaxStop = 120 * time.Second

// reportMargin is what a persona worker needs between its drain timeout and the kill to
// end its remaining calls and post their reports.
const reportMargin = 10 * time.Second

// clone deep-copies a template so that a test can break the copy.
func clone(t *testing.T, tpl *cfn.Template) *cfn.Template {
	t.Helper()
	b, err := json.Marshal(tpl)
	if err != nil {
		t.Fatal(err)
	}
	var c cfn.Template
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func containerNamed(tpl *cfn.Template, task, name string) map[string]any {
	r, ok := tpl.Resources[task]
	if !ok {
		return nil
	}
	for _, c := range list(r.Properties["ContainerDefinitions"]) {
		if c["Name"] == name {
			return c
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	return 0, false
}

func strs(v any) []string {
	var out []string
	s, _ := v.([]any)
	for _, e := range s {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// livekitDrainProblems: the livekit-server container is killed no sooner than the
// longest session allowed by MaxSessionMinutes (plus drainMargin) after SIGTERM, deploys
// never stop a node before its replacement runs, and instances with a server are
// protected from scale-in.
func livekitDrainProblems(tpl *cfn.Template) []string {
	return nodeDrainProblems(tpl, "LiveKitTask", "livekit-server", "LiveKitService", "NodeCount")
}

// sipDrainProblems is the same for livekit-sip's calls (sip-fleet.yaml).
func sipDrainProblems(tpl *cfn.Template) []string {
	return nodeDrainProblems(tpl, "SipTask", "livekit-sip", "SipService", "SipNodeCount")
}

// nodeDrainProblems checks a fleet of one server per EC2 instance: the container named
// name in task is killed no sooner than the longest session after SIGTERM, service's
// deploys start replacements first (and NodeGroup can hold them: countParam's largest
// value at MaximumPercent), and instances are protected from scale-in.
func nodeDrainProblems(tpl *cfn.Template, task, name, service, countParam string) []string {
	var probs []string
	param := tpl.Parameters["MaxSessionMinutes"]
	allowed := strs(param["AllowedValues"])
	if param == nil || len(allowed) == 0 {
		return []string{"parameter MaxSessionMinutes with AllowedValues is missing"}
	}
	c := containerNamed(tpl, task, name)
	if c == nil {
		return []string{fmt.Sprintf("no %s container in %s", name, task)}
	}
	want := `{"Fn::FindInMap":["SessionDrain",{"Ref":"MaxSessionMinutes"},"StopTimeoutSeconds"]}`
	if got, _ := json.Marshal(c["StopTimeout"]); string(got) != want {
		probs = append(probs, fmt.Sprintf("%s StopTimeout = %s, want %s", name, got, want))
	}
	drain := tpl.Mappings["SessionDrain"]
	for _, m := range allowed {
		minutes, ok := number(m)
		if !ok {
			probs = append(probs, fmt.Sprintf("MaxSessionMinutes allows %q, not a number", m))
			continue
		}
		entry, _ := drain[m].(map[string]any)
		secs, ok := number(entry["StopTimeoutSeconds"])
		if !ok {
			probs = append(probs, fmt.Sprintf("SessionDrain has no StopTimeoutSeconds for MaxSessionMinutes %s", m))
			continue
		}
		need := time.Duration(minutes*float64(time.Minute)) + drainMargin
		if got := time.Duration(secs) * time.Second; got < need {
			probs = append(probs, fmt.Sprintf("MaxSessionMinutes %s: stop timeout %v, want at least %v", m, got, need))
		}
	}
	if d, ok := param["Default"]; !ok || !containsString(allowed, fmt.Sprint(d)) {
		probs = append(probs, fmt.Sprintf("MaxSessionMinutes default %v is not one of its allowed values", d))
	}
	svc := tpl.Resources[service].Properties
	dc, _ := svc["DeploymentConfiguration"].(map[string]any)
	if minHealthy, _ := number(dc["MinimumHealthyPercent"]); minHealthy < 100 {
		probs = append(probs, fmt.Sprintf("%s MinimumHealthyPercent = %v: a deploy stops nodes before their replacements run", service, dc["MinimumHealthyPercent"]))
	}
	if maxPct, _ := number(dc["MaximumPercent"]); maxPct <= 100 {
		probs = append(probs, fmt.Sprintf("%s MaximumPercent = %v: a deploy cannot start a replacement beside a draining node", service, dc["MaximumPercent"]))
	}
	// One server per instance: a deploy at MaximumPercent needs that many instances.
	maxPct, _ := number(dc["MaximumPercent"])
	maxNodes := largestValue(tpl.Parameters[countParam])
	if asgMax, _ := number(tpl.Resources["NodeGroup"].Properties["MaxSize"]); asgMax < maxNodes*maxPct/100 {
		probs = append(probs, fmt.Sprintf("NodeGroup MaxSize %v cannot hold %v nodes at %v%% during a deploy", asgMax, maxNodes, maxPct))
	}
	if tpl.Resources["NodeGroup"].Properties["NewInstancesProtectedFromScaleIn"] != true {
		probs = append(probs, "NodeGroup does not protect new instances from scale-in")
	}
	asg := tpl.Resources["CapacityProvider"].Properties["AutoScalingGroupProvider"]
	if m, _ := asg.(map[string]any); m == nil || m["ManagedTerminationProtection"] != "ENABLED" {
		probs = append(probs, "CapacityProvider without managed termination protection: scale-in can terminate an instance with live rooms")
	}
	return probs
}

// largestValue is a Number parameter's MaxValue, or the largest of its AllowedValues.
func largestValue(p map[string]any) float64 {
	if n, ok := number(p["MaxValue"]); ok {
		return n
	}
	largest := 0.0
	for _, v := range p["AllowedValues"].([]any) {
		if n, ok := number(v); ok && n > largest {
			largest = n
		}
	}
	return largest
}

func containsString(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// sessionLinkProblems: the fleet's MaxSessionMinutes can hold the control plane's.
func sessionLinkProblems(control, fleet *cfn.Template) []string {
	var probs []string
	cp := control.Parameters["MaxSessionMinutes"]
	fp := fleet.Parameters["MaxSessionMinutes"]
	cDefault, ok1 := number(cp["Default"])
	fDefault, ok2 := number(fp["Default"])
	if !ok1 || !ok2 || fDefault < cDefault {
		probs = append(probs, fmt.Sprintf("fleet MaxSessionMinutes default %v below the control plane's %v", fp["Default"], cp["Default"]))
	}
	cMax, ok := number(cp["MaxValue"])
	if !ok {
		return append(probs, "control plane MaxSessionMinutes has no MaxValue")
	}
	largest := 0.0
	for _, v := range strs(fp["AllowedValues"]) {
		if n, ok := number(v); ok && n > largest {
			largest = n
		}
	}
	if largest < cMax {
		probs = append(probs, fmt.Sprintf("the control plane allows sessions of %v minutes, the fleet drains for at most %v", cMax, largest))
	}
	return probs
}

// personaDrainProblems: the worker's drain ends with time to report before Fargate's
// kill, and the stop timeout is one Fargate accepts.
func personaDrainProblems(tpl *cfn.Template) []string {
	c := containerNamed(tpl, "TaskDefinition", "persona-worker")
	if c == nil {
		return []string{"no persona-worker container in TaskDefinition"}
	}
	secs, ok := number(c["StopTimeout"])
	if !ok {
		return []string{fmt.Sprintf("persona-worker StopTimeout = %v, want a number of seconds", c["StopTimeout"])}
	}
	stop := time.Duration(secs) * time.Second
	var probs []string
	if stop > fargateMaxStop {
		probs = append(probs, fmt.Sprintf("persona-worker StopTimeout %v above Fargate's %v", stop, fargateMaxStop))
	}
	var drain time.Duration = -1
	for _, e := range list(c["Environment"]) {
		if e["Name"] == "PERSONA_DRAIN_TIMEOUT" {
			d, err := time.ParseDuration(fmt.Sprint(e["Value"]))
			if err != nil {
				return append(probs, fmt.Sprintf("PERSONA_DRAIN_TIMEOUT %v: %v", e["Value"], err))
			}
			drain = d
		}
	}
	switch {
	case drain < 0:
		// The worker's default (100 s) would then apply unseen by this stack.
		probs = append(probs, "PERSONA_DRAIN_TIMEOUT is not set")
	case drain == 0:
		probs = append(probs, "PERSONA_DRAIN_TIMEOUT 0 waits for calls forever: Fargate kills them without reports")
	case drain+reportMargin > stop:
		probs = append(probs, fmt.Sprintf("PERSONA_DRAIN_TIMEOUT %v leaves less than %v before the kill at %v", drain, reportMargin, stop))
	}
	return probs
}

var subRef = regexp.MustCompile(`\$\{([A-Za-z0-9]+)(\.[A-Za-z]+)?\}`)

// refsIn returns the logical ids v refers to (Ref, GetAtt, ${...} in Sub).
func refsIn(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "Ref":
				out = append(out, fmt.Sprint(e))
			case "Fn::GetAtt":
				if s := strs(e); len(s) > 0 {
					out = append(out, s[0])
				}
			case "Fn::Sub":
				s, _ := e.(string)
				if l, ok := e.([]any); ok && len(l) > 0 {
					s, _ = l[0].(string)
				}
				for _, m := range subRef.FindAllStringSubmatch(s, -1) {
					out = append(out, m[1])
				}
			default:
				out = append(out, refsIn(e)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, refsIn(e)...)
		}
	}
	return out
}

// desiredCountProblems: no count a scaler owns is pinned by the template, where every
// stack update would put it back: an ECS service under a scalable target has no
// DesiredCount, and an Auto Scaling group under a capacity provider's managed scaling
// has no DesiredCapacity.
func desiredCountProblems(tpl *cfn.Template) []string {
	var probs []string
	for id, st := range tpl.ResourcesOfType("AWS::ApplicationAutoScaling::ScalableTarget") {
		if st.Properties["ScalableDimension"] != "ecs:service:DesiredCount" {
			continue
		}
		for _, ref := range refsIn(st.Properties["ResourceId"]) {
			if svc, ok := tpl.Resources[ref]; ok && svc.Type == "AWS::ECS::Service" {
				if _, pinned := svc.Properties["DesiredCount"]; pinned {
					probs = append(probs, fmt.Sprintf("%s sets DesiredCount, which scalable target %s owns", ref, id))
				}
			}
		}
	}
	for id, cp := range tpl.ResourcesOfType("AWS::ECS::CapacityProvider") {
		p, _ := cp.Properties["AutoScalingGroupProvider"].(map[string]any)
		ms, _ := p["ManagedScaling"].(map[string]any)
		if ms == nil || ms["Status"] != "ENABLED" {
			continue
		}
		for _, ref := range refsIn(p["AutoScalingGroupArn"]) {
			if asg, ok := tpl.Resources[ref]; ok && asg.Type == "AWS::AutoScaling::AutoScalingGroup" {
				if _, pinned := asg.Properties["DesiredCapacity"]; pinned {
					probs = append(probs, fmt.Sprintf("%s sets DesiredCapacity, which capacity provider %s scales", ref, id))
				}
			}
		}
	}
	return probs
}

var resolveToken = regexp.MustCompile(`^\{\{resolve:secretsmanager:\$\{([A-Za-z0-9]+)\}:SecretString:([A-Za-z0-9_]+)\}\}$`)

// redisAuthProblems: every ElastiCache group requires TLS and an AUTH token generated in
// Secrets Manager (a bare Redis cache cluster, which cannot have one, is refused), and livekit-server gets that same token as REDIS_PASSWORD (its
// --redis-password flag) from the same secret, which its execution role may read.
func redisAuthProblems(tpl *cfn.Template) []string {
	var probs []string
	for id, c := range tpl.ResourcesOfType("AWS::ElastiCache::CacheCluster") {
		if e, _ := c.Properties["Engine"].(string); strings.EqualFold(e, "redis") || strings.EqualFold(e, "valkey") {
			probs = append(probs, fmt.Sprintf("cache cluster %s runs %s without AUTH (use a replication group with an AuthToken)", id, e))
		}
	}
	groups := tpl.ResourcesOfType("AWS::ElastiCache::ReplicationGroup")
	if len(groups) == 0 {
		return append(probs, "no ElastiCache replication group")
	}
	c := containerNamed(tpl, "LiveKitTask", "livekit-server")
	for id, g := range groups {
		if g.Properties["TransitEncryptionEnabled"] != true {
			probs = append(probs, fmt.Sprintf("%s without TransitEncryptionEnabled (AUTH requires it)", id))
		}
		sub, _ := g.Properties["AuthToken"].(map[string]any)
		text, _ := sub["Fn::Sub"].(string)
		m := resolveToken.FindStringSubmatch(text)
		if m == nil {
			probs = append(probs, fmt.Sprintf("%s AuthToken = %v, want a {{resolve:secretsmanager:...}} of a secret in this stack", id, g.Properties["AuthToken"]))
			continue
		}
		secret, field := m[1], m[2]
		if s := tpl.Resources[secret]; s.Type != "AWS::SecretsManager::Secret" || s.Properties["GenerateSecretString"] == nil {
			probs = append(probs, fmt.Sprintf("%s AuthToken comes from %s, not a generated Secrets Manager secret", id, secret))
		}
		var from string
		if c != nil {
			for _, s := range list(c["Secrets"]) {
				if s["Name"] == "REDIS_PASSWORD" {
					v, _ := s["ValueFrom"].(map[string]any)
					from, _ = v["Fn::Sub"].(string)
				}
			}
		}
		if want := "${" + secret + "}:" + field + "::"; from != want {
			probs = append(probs, fmt.Sprintf("livekit-server REDIS_PASSWORD from %q, want %q", from, want))
		}
		role := tpl.Resources["TaskExecutionRole"].Properties
		if !containsString(refsIn(role["Policies"]), secret) {
			probs = append(probs, fmt.Sprintf("TaskExecutionRole cannot read %s", secret))
		}
	}
	return probs
}

// turnProblems: turn.domain is a hostname of the stack whose TLS listener on 443 (the
// port livekit-server puts in every turns: URL) carries that hostname's certificate and
// forwards to turn.tls_port. TestTurnICEServers checks the same against a running server.
func turnProblems(tpl *cfn.Template) []string {
	c := containerNamed(tpl, "LiveKitTask", "livekit-server")
	if c == nil {
		return []string{"no livekit-server container in LiveKitTask"}
	}
	var text string
	for _, e := range list(c["Environment"]) {
		if e["Name"] == "LIVEKIT_CONFIG" {
			v, _ := e["Value"].(map[string]any)
			text, _ = v["Fn::Sub"].(string)
		}
	}
	var unknown []string
	text = subVar.ReplaceAllStringFunc(text, func(m string) string {
		name := subVar.FindStringSubmatch(m)[1]
		v, ok := fleetValues[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return v
	})
	if len(unknown) > 0 {
		return []string{fmt.Sprintf("LIVEKIT_CONFIG uses %v, which the check has no value for", unknown)}
	}
	var conf liveKitConfig
	if err := yaml.Unmarshal([]byte(text), &conf); err != nil {
		return []string{fmt.Sprintf("LIVEKIT_CONFIG: %v", err)}
	}
	if !conf.TURN.Enabled || conf.TURN.TLSPort == 0 {
		return []string{"TURN over TLS is not enabled"}
	}
	for param, cert := range certFor {
		if fleetValues[param] != conf.TURN.Domain {
			continue
		}
		if _, ok := tpl.Parameters[param]; !ok {
			return []string{fmt.Sprintf("no parameter %s", param)}
		}
		if err := tlsListenerTo(tpl, 443, cert, conf.TURN.TLSPort); err != nil {
			return []string{fmt.Sprintf("turn.domain is ${%s}: %v", param, err)}
		}
		return nil
	}
	return []string{fmt.Sprintf("turn.domain %q is none of the stack's hostnames", conf.TURN.Domain)}
}

// reachProblems: each load balancer's security group may reach the nodes on the port it
// forwards to and the port it health-checks, or the targets never turn healthy.
func reachProblems(tpl *cfn.Template) []string {
	var probs []string
	open := map[string]bool{} // "sourceGroup/port"
	for _, r := range list(tpl.Resources["NodeSecurityGroup"].Properties["SecurityGroupIngress"]) {
		from, _ := number(r["FromPort"])
		to, _ := number(r["ToPort"])
		for _, src := range refsIn(r["SourceSecurityGroupId"]) {
			for p := from; p <= to; p++ {
				open[fmt.Sprintf("%s/%v", src, p)] = true
			}
		}
	}
	for id, l := range tpl.ResourcesOfType("AWS::ElasticLoadBalancingV2::Listener") {
		lbs := refsIn(l.Properties["LoadBalancerArn"])
		if len(lbs) != 1 {
			probs = append(probs, fmt.Sprintf("listener %s: load balancer %v", id, l.Properties["LoadBalancerArn"]))
			continue
		}
		groups := refsIn(tpl.Resources[lbs[0]].Properties["SecurityGroups"])
		for _, a := range list(l.Properties["DefaultActions"]) {
			for _, tgID := range refsIn(a["TargetGroupArn"]) {
				tg := tpl.Resources[tgID].Properties
				port := fmt.Sprint(tg["Port"])
				hc := fmt.Sprint(tg["HealthCheckPort"])
				if hc == "traffic-port" || tg["HealthCheckPort"] == nil {
					hc = port
				}
				for _, p := range []string{port, hc} {
					ok := false
					for _, g := range groups {
						ok = ok || open[g+"/"+p]
					}
					if !ok {
						probs = append(probs, fmt.Sprintf("%s (%s) cannot reach the nodes on %s for %s", lbs[0], strings.Join(groups, ","), p, tgID))
					}
				}
			}
		}
	}
	return probs
}

func TestFleetPolicies(t *testing.T) {
	livekitFleet := load(t, "livekit-fleet.yaml")
	personaFleet := load(t, "persona-fleet.yaml")
	sipFleet := load(t, "sip-fleet.yaml")
	control := load(t, "../template.yaml")
	type check func(*cfn.Template) []string
	tests := []struct {
		name  string
		tpl   *cfn.Template
		check check
		// breaks, when set, damages a copy of tpl, which check must then reject.
		breaks func(*cfn.Template)
	}{
		{name: "turn", tpl: livekitFleet, check: turnProblems},
		{name: "turn: on the signalling hostname", tpl: livekitFleet, check: turnProblems, breaks: func(tpl *cfn.Template) {
			for _, e := range list(containerNamed(tpl, "LiveKitTask", "livekit-server")["Environment"]) {
				if e["Name"] == "LIVEKIT_CONFIG" {
					v := e["Value"].(map[string]any)
					v["Fn::Sub"] = strings.Replace(v["Fn::Sub"].(string), "domain: ${TurnDomainName}", "domain: ${DomainName}", 1)
				}
			}
		}},
		{name: "turn: listener on 5349", tpl: livekitFleet, check: turnProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["TurnListener"].Properties["Port"] = float64(5349)
		}},
		{name: "load balancers reach the nodes", tpl: livekitFleet, check: reachProblems},
		{name: "load balancers reach the nodes: TURN health-checked on the signalling port", tpl: livekitFleet, check: reachProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["TurnTargets"].Properties["HealthCheckPort"] = "7880"
		}},
		{name: "livekit drain", tpl: livekitFleet, check: livekitDrainProblems},
		{name: "livekit drain: the old two minutes", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			containerNamed(tpl, "LiveKitTask", "livekit-server")["StopTimeout"] = float64(120)
		}},
		{name: "livekit drain: a mapping entry shorter than its session", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Mappings["SessionDrain"]["60"] = map[string]any{"StopTimeoutSeconds": float64(3600)}
		}},
		{name: "livekit drain: an allowed value without a mapping entry", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			delete(tpl.Mappings["SessionDrain"], "1440")
		}},
		{name: "livekit drain: a deploy that stops nodes first", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["LiveKitService"].Properties["DeploymentConfiguration"] = map[string]any{"MinimumHealthyPercent": float64(50), "MaximumPercent": float64(100)}
		}},
		{name: "livekit drain: no room for replacements", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["NodeGroup"].Properties["MaxSize"] = "50"
		}},
		{name: "livekit drain: no managed termination protection", tpl: livekitFleet, check: livekitDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["CapacityProvider"].Properties["AutoScalingGroupProvider"].(map[string]any)["ManagedTerminationProtection"] = "DISABLED"
		}},
		{name: "persona drain", tpl: personaFleet, check: personaDrainProblems},
		{name: "persona drain: stop timeout above Fargate's", tpl: personaFleet, check: personaDrainProblems, breaks: func(tpl *cfn.Template) {
			containerNamed(tpl, "TaskDefinition", "persona-worker")["StopTimeout"] = float64(300)
		}},
		{name: "persona drain: no time left to report", tpl: personaFleet, check: personaDrainProblems, breaks: func(tpl *cfn.Template) {
			for _, e := range list(containerNamed(tpl, "TaskDefinition", "persona-worker")["Environment"]) {
				if e["Name"] == "PERSONA_DRAIN_TIMEOUT" {
					e["Value"] = "115s"
				}
			}
		}},
		{name: "persona desired count", tpl: personaFleet, check: desiredCountProblems},
		{name: "persona desired count: pinned", tpl: personaFleet, check: desiredCountProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["Service"].Properties["DesiredCount"] = map[string]any{"Ref": "MinTasks"}
		}},
		{name: "livekit desired capacity", tpl: livekitFleet, check: desiredCountProblems},
		{name: "livekit desired capacity: pinned", tpl: livekitFleet, check: desiredCountProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["NodeGroup"].Properties["DesiredCapacity"] = map[string]any{"Ref": "NodeCount"}
		}},
		{name: "redis auth", tpl: livekitFleet, check: redisAuthProblems},
		{name: "redis auth: no token", tpl: livekitFleet, check: redisAuthProblems, breaks: func(tpl *cfn.Template) {
			delete(tpl.Resources["Redis"].Properties, "AuthToken")
		}},
		{name: "redis auth: token not given to livekit-server", tpl: livekitFleet, check: redisAuthProblems, breaks: func(tpl *cfn.Template) {
			c := containerNamed(tpl, "LiveKitTask", "livekit-server")
			c["Secrets"] = c["Secrets"].([]any)[:1]
		}},
		{name: "redis auth: a bare cache cluster beside the group", tpl: livekitFleet, check: redisAuthProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["Cache"] = cfn.Resource{Type: "AWS::ElastiCache::CacheCluster", Properties: map[string]any{"Engine": "redis", "CacheNodeType": "cache.t4g.micro", "NumCacheNodes": float64(1)}}
		}},
		{name: "redis auth: role cannot read the token", tpl: livekitFleet, check: redisAuthProblems, breaks: func(tpl *cfn.Template) {
			for _, p := range list(tpl.Resources["TaskExecutionRole"].Properties["Policies"]) {
				for _, s := range list(p["PolicyDocument"].(map[string]any)["Statement"]) {
					s["Resource"] = map[string]any{"Ref": "LiveKitCredentialsArn"}
				}
			}
		}},
		{name: "sip drain", tpl: sipFleet, check: sipDrainProblems},
		{name: "sip drain: two minutes", tpl: sipFleet, check: sipDrainProblems, breaks: func(tpl *cfn.Template) {
			containerNamed(tpl, "SipTask", "livekit-sip")["StopTimeout"] = float64(120)
		}},
		{name: "sip drain: a deploy that stops nodes first", tpl: sipFleet, check: sipDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["SipService"].Properties["DeploymentConfiguration"] = map[string]any{"MinimumHealthyPercent": float64(0), "MaximumPercent": float64(100)}
		}},
		{name: "sip drain: no room for replacements", tpl: sipFleet, check: sipDrainProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["NodeGroup"].Properties["MaxSize"] = "2"
		}},
		{name: "sip desired capacity", tpl: sipFleet, check: desiredCountProblems},
		{name: "sip desired capacity: pinned", tpl: sipFleet, check: desiredCountProblems, breaks: func(tpl *cfn.Template) {
			tpl.Resources["NodeGroup"].Properties["DesiredCapacity"] = map[string]any{"Ref": "SipNodeCount"}
		}},
		{name: "sip redis auth", tpl: sipFleet, check: sipRedisProblems},
		{name: "sip redis auth: token not given to livekit-sip", tpl: sipFleet, check: sipRedisProblems, breaks: func(tpl *cfn.Template) {
			c := containerNamed(tpl, "SipTask", "livekit-sip")
			c["Secrets"] = c["Secrets"].([]any)[:1]
		}},
		{name: "sip redis auth: role cannot read the token", tpl: sipFleet, check: sipRedisProblems, breaks: func(tpl *cfn.Template) {
			for _, p := range list(tpl.Resources["TaskExecutionRole"].Properties["Policies"]) {
				for _, s := range list(p["PolicyDocument"].(map[string]any)["Statement"]) {
					s["Resource"] = map[string]any{"Ref": "LiveKitCredentialsArn"}
				}
			}
		}},
		{name: "sip redis auth: plain text to Redis", tpl: sipFleet, check: sipRedisProblems, breaks: func(tpl *cfn.Template) {
			for _, e := range list(containerNamed(tpl, "SipTask", "livekit-sip")["Environment"]) {
				if e["Name"] == "SIP_CONFIG" {
					v := e["Value"].(map[string]any)
					v["Fn::Sub"] = strings.Replace(v["Fn::Sub"].(string), "enabled: true", "enabled: false", 1)
				}
			}
		}},
		{name: "sip address pool", tpl: sipFleet, check: sipAddressProblems},
		{name: "sip address pool: too small for a deploy", tpl: sipFleet, check: sipAddressProblems, breaks: func(tpl *cfn.Template) {
			delete(tpl.Resources, "SipAddress4")
		}},
		{name: "sip address pool: nodes may take any address", tpl: sipFleet, check: sipAddressProblems, breaks: func(tpl *cfn.Template) {
			for _, p := range list(tpl.Resources["NodeRole"].Properties["Policies"]) {
				for _, s := range list(p["PolicyDocument"].(map[string]any)["Statement"]) {
					s["Resource"] = "*"
				}
			}
		}},
		{name: "sip gateway", tpl: sipFleet, check: sipGatewayProblems},
		{name: "sip gateway: bridge joins LiveKit directly", tpl: sipFleet, check: sipGatewayProblems, breaks: func(tpl *cfn.Template) {
			for _, e := range list(containerNamed(tpl, "SipTask", "livekit-sip")["Environment"]) {
				if e["Name"] == "SIP_CONFIG" {
					v := e["Value"].(map[string]any)
					v["Fn::Sub"] = strings.Replace(v["Fn::Sub"].(string), "ws_url: ws://127.0.0.1:8091", "ws_url: ${LiveKitURL}", 1)
				}
			}
		}},
		{name: "sip gateway: bridge starts without it", tpl: sipFleet, check: sipGatewayProblems, breaks: func(tpl *cfn.Template) {
			delete(containerNamed(tpl, "SipTask", "livekit-sip"), "DependsOn")
		}},
		{name: "sip gateway: listens on every address", tpl: sipFleet, check: sipGatewayProblems, breaks: func(tpl *cfn.Template) {
			for _, e := range list(containerNamed(tpl, "SipTask", "sip-gateway")["Environment"]) {
				if e["Name"] == "LISTEN_ADDR" {
					e["Value"] = "0.0.0.0:8091"
				}
			}
		}},
		{name: "sip gateway: role cannot read the SIP secret", tpl: sipFleet, check: sipGatewayProblems, breaks: func(tpl *cfn.Template) {
			for _, p := range list(tpl.Resources["TaskExecutionRole"].Properties["Policies"]) {
				for _, s := range list(p["PolicyDocument"].(map[string]any)["Statement"]) {
					if res, ok := s["Resource"].([]any); ok {
						s["Resource"] = res[:len(res)-1]
					}
				}
			}
		}},
		{name: "sip session link", tpl: sipFleet, check: func(f *cfn.Template) []string { return sessionLinkProblems(control, f) }},
		{name: "session link", tpl: livekitFleet, check: func(f *cfn.Template) []string { return sessionLinkProblems(control, f) }},
		{name: "session link: fleet drains shorter than the control plane's longest session", tpl: livekitFleet,
			check: func(f *cfn.Template) []string { return sessionLinkProblems(control, f) },
			breaks: func(tpl *cfn.Template) {
				tpl.Parameters["MaxSessionMinutes"]["AllowedValues"] = []any{"15", "30", "60"}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := tt.tpl
			if tt.breaks != nil {
				tpl = clone(t, tpl)
				tt.breaks(tpl)
			}
			probs := tt.check(tpl)
			switch {
			case tt.breaks == nil && len(probs) > 0:
				t.Errorf("problems:\n%s", strings.Join(probs, "\n"))
			case tt.breaks != nil && len(probs) == 0:
				t.Error("the broken template passed")
			case tt.breaks != nil:
				t.Logf("rejected: %s", strings.Join(probs, "; "))
			}
		})
	}
}
