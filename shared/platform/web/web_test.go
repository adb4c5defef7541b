package web_test

import (
	"testing"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/web"
)

// TestKind: the web platform dials nothing, cannot transfer, and takes test keys.
func TestKind(t *testing.T) {
	var k platform.Kind = web.Kind{}
	if k.Name() != "web" || k.CanTransfer() || !k.TestKeys() {
		t.Errorf("web.Kind: name %q, can transfer %v, test keys %v; want web, false, true", k.Name(), k.CanTransfer(), k.TestKeys())
	}
	for _, h := range []string{"+15550100002", "sim:alice", ""} {
		err := k.CheckHandle(h)
		e, ok := apierr.As(err)
		if !ok || e.Code != apierr.CodeParameterInvalid || e.Param != "platform_handle" {
			t.Errorf("CheckHandle(%q) = %v, want parameter_invalid on platform_handle", h, err)
		}
	}
}
