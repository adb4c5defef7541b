package platform_test

import (
	"context"
	"testing"

	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
)

// adapter is a Platform of a given Kind that places nothing.
type adapter struct{ platform.Kind }

func (adapter) Dial(context.Context, platform.DialRequest) (string, error)  { return "", nil }
func (adapter) Answer(context.Context, string, string, platform.Room) error { return nil }
func (adapter) Reject(context.Context, string, string) error                { return nil }
func (adapter) Hangup(context.Context, string) error                        { return nil }

// named is a Kind with another name, for the registry's checks.
type named struct {
	sim.Kind
	name string
}

func (n named) Name() string { return n.name }

func TestRegistry(t *testing.T) {
	r, err := platform.NewRegistry(adapter{sim.Kind{}}, adapter{named{name: "sip"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sim", "sip"} {
		if p, ok := r.Lookup(name); !ok || p.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v; want the platform named %s", name, p, ok, name)
		}
	}
	if _, ok := r.Lookup("web"); ok {
		t.Error("Lookup(web) found a platform that was not registered")
	}
	if _, ok := (platform.Registry{}).Lookup("sim"); ok {
		t.Error("the zero Registry found a platform")
	}
	for name, ps := range map[string][]platform.Platform{
		"two with one name": {adapter{sim.Kind{}}, adapter{sim.Kind{}}},
		"one without name":  {adapter{named{name: ""}}},
	} {
		if _, err := platform.NewRegistry(ps...); err == nil {
			t.Errorf("NewRegistry(%s) = nil error, want a refusal", name)
		}
	}
}
