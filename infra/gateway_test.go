package infra_test

// Checks of the sim platform gateway stack (platform-gateway.yaml): one task that never
// overlaps another, the secret and URLs it is given, only the signed routes forwarded
// by default, and the parameters that connect it to template.yaml.

import (
	"fmt"
	"strings"
	"testing"
)

func TestGatewayStack(t *testing.T) {
	tpl := load(t, "platform-gateway.yaml")

	svc := tpl.Resources["Service"].Properties
	dc, _ := svc["DeploymentConfiguration"].(map[string]any)
	if fmt.Sprint(svc["DesiredCount"]) != "1" || fmt.Sprint(dc["MaximumPercent"]) != "100" || fmt.Sprint(dc["MinimumHealthyPercent"]) != "0" {
		t.Errorf("Service = %v, deployment %v: want one task, never two at once (calls live in memory)", svc["DesiredCount"], dc)
	}

	var c map[string]any
	for _, cd := range list(tpl.Resources["TaskDefinition"].Properties["ContainerDefinitions"]) {
		if cd["Name"] == "platform-gateway" {
			c = cd
		}
	}
	if c == nil {
		t.Fatal("no platform-gateway container")
	}
	if fmt.Sprint(c["EntryPoint"]) != "[/usr/local/bin/platform-gateway]" {
		t.Errorf("EntryPoint = %v", c["EntryPoint"])
	}
	env := map[string]any{}
	for _, e := range list(c["Environment"]) {
		env[fmt.Sprint(e["Name"])] = e["Value"]
	}
	if ref, _ := env["CONTROL_PLANE_URL"].(map[string]any)["Ref"].(string); ref != "ControlPlaneURL" {
		t.Errorf("CONTROL_PLANE_URL = %v, want !Ref ControlPlaneURL", env["CONTROL_PLANE_URL"])
	}
	if env["LISTEN_ADDR"] != "0.0.0.0:8090" {
		t.Errorf("LISTEN_ADDR = %v, want 0.0.0.0:8090 (the target group's port)", env["LISTEN_ADDR"])
	}
	secrets := list(c["Secrets"])
	if len(secrets) != 2 || secrets[0]["Name"] != "SIM_SECRET" || fmt.Sprint(secrets[0]["ValueFrom"]) != "map[Ref:SimCredentialsArn]" {
		t.Errorf("Secrets = %v, want SIM_SECRET from SimCredentialsArn", secrets)
	}
	for k, v := range env {
		if strings.Contains(fmt.Sprint(v), "Secret") {
			t.Errorf("environment %s = %v carries a secret", k, v)
		}
	}

	// HTTPS only; the default answer is 404; /gateway/* always forwarded, /sim/* only
	// when exposed.
	l := tpl.Resources["Listener"].Properties
	if l["Protocol"] != "HTTPS" || fmt.Sprint(l["Port"]) != "443" {
		t.Errorf("Listener = %v %v, want HTTPS on 443", l["Protocol"], l["Port"])
	}
	if acts := list(l["DefaultActions"]); len(acts) != 1 || acts[0]["Type"] != "fixed-response" {
		t.Errorf("default actions = %v, want a fixed 404", acts)
	}
	rule := func(id string) string {
		for _, cond := range list(tpl.Resources[id].Properties["Conditions"]) {
			if v, ok := cond["PathPatternConfig"].(map[string]any); ok {
				return fmt.Sprint(v["Values"])
			}
		}
		return ""
	}
	if got := rule("ControlRule"); got != "[/gateway/*]" || tpl.Resources["ControlRule"].Condition != "" {
		t.Errorf("ControlRule paths = %s (condition %q), want /gateway/* always", got, tpl.Resources["ControlRule"].Condition)
	}
	if got := rule("SimAPIRule"); got != "[/sim/*]" || tpl.Resources["SimAPIRule"].Condition != "SimAPIExposed" {
		t.Errorf("SimAPIRule paths = %s (condition %q), want /sim/* only when SimAPIExposed", got, tpl.Resources["SimAPIRule"].Condition)
	}
	if p := tpl.Parameters["ExposeSimAPI"]; p["Default"] != "false" {
		t.Errorf("ExposeSimAPI default = %v, want false", p["Default"])
	}
	// Exposed, the sim's API requires a credential: a generated secret the task gets as
	// SIM_API_TOKEN (without which the gateway serves no /sim/).
	if tok := tpl.Resources["SimAPIToken"]; tok.Type != "AWS::SecretsManager::Secret" || tok.Condition != "SimAPIExposed" ||
		tok.Properties["GenerateSecretString"] == nil {
		t.Errorf("SimAPIToken = %+v, want a generated Secrets Manager secret under SimAPIExposed", tok)
	}
	tokenGiven := false
	for _, c := range list(tpl.Resources["TaskDefinition"].Properties["ContainerDefinitions"]) {
		for _, sec := range c["Secrets"].([]any) {
			if fmt.Sprint(sec) == fmt.Sprint(map[string]any{"Fn::If": []any{"SimAPIExposed",
				map[string]any{"Name": "SIM_API_TOKEN", "ValueFrom": map[string]any{"Ref": "SimAPIToken"}},
				map[string]any{"Ref": "AWS::NoValue"}}}) {
				tokenGiven = true
			}
		}
	}
	if !tokenGiven {
		t.Error("the gateway task does not get SIM_API_TOKEN from SimAPIToken when the sim API is exposed")
	}
	if hc := tpl.Resources["TargetGroup"].Properties["HealthCheckPath"]; hc != "/healthz" {
		t.Errorf("health check path = %v, want /healthz", hc)
	}
}

// TestGatewayConnects: the outputs docs/deploy.md tells operators to copy between
// template.yaml and platform-gateway.yaml have their parameters on the other side, and
// the control plane keeps the sim secret out of function configuration.
func TestGatewayConnects(t *testing.T) {
	control := load(t, "../template.yaml")
	gw := load(t, "platform-gateway.yaml")
	for _, l := range []struct {
		from, to       string
		output, param  string
		fromTpl, toTpl map[string]map[string]any
	}{
		{"template.yaml", "platform-gateway.yaml", "InternalURL", "ControlPlaneURL", control.Outputs, gw.Parameters},
		{"template.yaml", "platform-gateway.yaml", "SimCredentialsArn", "SimCredentialsArn", control.Outputs, gw.Parameters},
		{"platform-gateway.yaml", "template.yaml", "GatewayURL", "PlatformGatewayURL", gw.Outputs, control.Parameters},
	} {
		if _, ok := l.fromTpl[l.output]; !ok {
			t.Errorf("%s has no output %s", l.from, l.output)
		}
		if _, ok := l.toTpl[l.param]; !ok {
			t.Errorf("%s has no parameter %s for %s's %s", l.to, l.param, l.from, l.output)
		}
	}
	if p := control.Parameters["SimSecret"]; p["NoEcho"] != true {
		t.Errorf("template.yaml SimSecret = %v, want NoEcho", p)
	}
	if r := control.Resources["SimCredentials"]; r.Type != "AWS::SecretsManager::Secret" {
		t.Errorf("SimCredentials is %q, want a Secrets Manager secret", r.Type)
	}
}
