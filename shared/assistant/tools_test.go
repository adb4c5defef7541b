package assistant

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/egress"
)

func TestValidTools(t *testing.T) {
	ok := Tool{Name: "lookup_order", Description: "Finds an order by its number.", URL: "https://example.com/tools",
		Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}}}`)}
	with := func(mod func(*Tool)) []Tool {
		t := ok
		mod(&t)
		return []Tool{t}
	}
	many := func(n int) []Tool {
		out := make([]Tool, n)
		for i := range out {
			out[i] = ok
			out[i].Name = fmt.Sprintf("tool_%d", i)
		}
		return out
	}
	bigSchema := func(n int) json.RawMessage {
		return json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", n) + `"}`)
	}
	tests := []struct {
		name  string
		tools []Tool
		live  bool
		code  string // "" for valid
		param string
	}{
		{"a tool", []Tool{ok}, false, "", ""},
		{"sixteen tools", many(16), false, "", ""},
		{"seventeen", many(17), false, apierr.CodeParameterInvalid, "tools"},
		{"no name", with(func(t *Tool) { t.Name = "" }), false, apierr.CodeParameterMissing, "tools[0].name"},
		{"name with a space", with(func(t *Tool) { t.Name = "look up" }), false, apierr.CodeParameterInvalid, "tools[0].name"},
		{"name too long", with(func(t *Tool) { t.Name = strings.Repeat("a", 65) }), false, apierr.CodeParameterInvalid, "tools[0].name"},
		{"name of 64", with(func(t *Tool) { t.Name = strings.Repeat("a", 64) }), false, "", ""},
		{"end_call is built in", with(func(t *Tool) { t.Name = "end_call" }), false, apierr.CodeParameterInvalid, "tools[0].name"},
		{"transfer_call is built in", with(func(t *Tool) { t.Name = "transfer_call" }), false, apierr.CodeParameterInvalid, "tools[0].name"},
		{"look is built in", with(func(t *Tool) { t.Name = "look" }), false, apierr.CodeParameterInvalid, "tools[0].name"},
		{"two of one name", []Tool{ok, ok}, false, apierr.CodeParameterInvalid, "tools[1].name"},
		{"long description", with(func(t *Tool) { t.Description = strings.Repeat("é", 1001) }), false, apierr.CodeParameterInvalid, "tools[0].description"},
		{"no parameters", with(func(t *Tool) { t.Parameters = nil }), false, "", ""},
		{"parameters not a schema", with(func(t *Tool) { t.Parameters = json.RawMessage(`{"type":"object","required":3}`) }), false, apierr.CodeParameterInvalid, "tools[0].parameters"},
		{"parameters not an object", with(func(t *Tool) { t.Parameters = json.RawMessage(`{"type":"array"}`) }), false, apierr.CodeParameterInvalid, "tools[0].parameters"},
		{"parameters of 8 KiB", with(func(t *Tool) { t.Parameters = bigSchema(MaxToolParametersBytes - 40) }), false, "", ""},
		{"parameters over 8 KiB", with(func(t *Tool) { t.Parameters = bigSchema(MaxToolParametersBytes) }), false, apierr.CodeParameterInvalid, "tools[0].parameters"},
		{"parameters over 32 KiB together", func() []Tool {
			ts := many(5)
			for i := range ts {
				ts[i].Parameters = bigSchema(7000)
			}
			return ts
		}(), false, apierr.CodeParameterInvalid, "tools[4].parameters"},
		{"no url", with(func(t *Tool) { t.URL = "" }), false, apierr.CodeParameterMissing, "tools[0].url"},
		{"relative url", with(func(t *Tool) { t.URL = "/tools" }), false, apierr.CodeParameterInvalid, "tools[0].url"},
		{"ftp url", with(func(t *Tool) { t.URL = "ftp://example.com/" }), false, apierr.CodeParameterInvalid, "tools[0].url"},
		{"credentials in the url", with(func(t *Tool) { t.URL = "https://user:pw@example.com/" }), false, apierr.CodeParameterInvalid, "tools[0].url"},
		{"metadata address", with(func(t *Tool) { t.URL = "http://169.254.169.254/latest/meta-data" }), false, apierr.CodeURLNotAllowed, "tools[0].url"},
		{"private address", with(func(t *Tool) { t.URL = "https://10.0.0.5/tools" }), false, apierr.CodeURLNotAllowed, "tools[0].url"},
		{"loopback", with(func(t *Tool) { t.URL = "http://127.0.0.1:9000/tools" }), false, apierr.CodeURLNotAllowed, "tools[0].url"},
		{"http with a test key", with(func(t *Tool) { t.URL = "http://example.com/tools" }), false, "", ""},
		{"http with a live key", with(func(t *Tool) { t.URL = "http://example.com/tools" }), true, apierr.CodeURLNotAllowed, "tools[0].url"},
		{"https with a live key", []Tool{ok}, true, "", ""},
		{"timeout too short", with(func(t *Tool) { t.TimeoutMS = 99 }), false, apierr.CodeParameterInvalid, "tools[0].timeout_ms"},
		{"timeout too long", with(func(t *Tool) { t.TimeoutMS = 20001 }), false, apierr.CodeParameterInvalid, "tools[0].timeout_ms"},
		{"timeout at most", with(func(t *Tool) { t.TimeoutMS = 20000 }), false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := validTools(tt.tools, toolRules{dest: egress.Policy{}, liveKey: tt.live})
			if tt.code == "" {
				if err != nil {
					t.Fatalf("validTools = %v, want valid", err)
				}
				for _, g := range got {
					if g.TimeoutMS == 0 || len(g.Parameters) == 0 {
						t.Errorf("tool %+v: defaults not filled", g)
					}
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != tt.code || e.Param != tt.param {
				t.Fatalf("validTools = %v, want %s on %s", err, tt.code, tt.param)
			}
		})
	}
}

func TestToolDefaults(t *testing.T) {
	got, err := validTools([]Tool{{Name: "ping", URL: "https://example.com/ping", Parameters: json.RawMessage("null")}}, toolRules{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].TimeoutMS != DefaultToolTimeoutMS || string(got[0].Parameters) != string(EmptyParameters) {
		t.Errorf("defaults = %+v, want timeout %d and no arguments", got[0], DefaultToolTimeoutMS)
	}
	if d := (CallSettings{}).IdleTimeout(); d != 30*time.Second {
		t.Errorf("IdleTimeout of an old record = %v, want 30s", d)
	}
}

func TestCallLimits(t *testing.T) {
	for _, tt := range []struct {
		idle, most int
		wantIdle   bool
		wantMost   bool
	}{
		{10, 10, true, true}, {600, 3600, true, true}, {9, 9, false, false}, {601, 3601, false, false},
	} {
		if got := validIdleTimeout(tt.idle) == nil; got != tt.wantIdle {
			t.Errorf("idle_timeout_seconds %d valid = %v, want %v", tt.idle, got, tt.wantIdle)
		}
		if got := validMaxDuration(tt.most, time.Hour) == nil; got != tt.wantMost {
			t.Errorf("max_duration_seconds %d under an hour valid = %v, want %v", tt.most, got, tt.wantMost)
		}
	}
}
