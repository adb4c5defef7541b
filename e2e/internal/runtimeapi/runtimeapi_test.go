package runtimeapi

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestEchoFunction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if err := Build(ctx, ".", "./testdata/echo", bin, runtime.GOOS, runtime.GOARCH); err != nil {
		t.Fatal(err)
	}
	p, err := Run(bin, "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	tests := []struct {
		name    string
		event   string
		want    string
		wantErr string
	}{
		{"success", `{"say":"hello"}`, `{"said":"hello","arn":"arn:aws:lambda:us-east-1:000000000000:function:echo"}`, ""},
		{"handler error", `{"fail":true}`, "", "errorString"},
		{"second success on the same process", `{"say":"again"}`, `{"said":"again","arn":"arn:aws:lambda:us-east-1:000000000000:function:echo"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := p.Invoke(ctx, []byte(tt.event))
			if err != nil {
				t.Fatal(err)
			}
			if r.Err != tt.wantErr {
				t.Errorf("Invoke(%s) error type = %q, want %q (payload %s)", tt.event, r.Err, tt.wantErr, r.Payload)
			}
			if tt.want != "" && !jsonEqual(t, r.Payload, []byte(tt.want)) {
				t.Errorf("Invoke(%s) = %s, want %s", tt.event, r.Payload, tt.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
