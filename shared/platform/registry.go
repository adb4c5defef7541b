package platform

import "fmt"

// Registry is the calling platforms a process can reach, each under its own Name: the
// control plane finds a line's platform here (Lookup of the line's Platform).
type Registry struct {
	byName map[string]Platform
}

// NewRegistry registers ps. Two with one name, or one without a name, are refused.
func NewRegistry(ps ...Platform) (Registry, error) {
	r := Registry{byName: make(map[string]Platform, len(ps))}
	for _, p := range ps {
		name := p.Name()
		if name == "" {
			return Registry{}, fmt.Errorf("platform: a platform (%T) without a name", p)
		}
		if _, dup := r.byName[name]; dup {
			return Registry{}, fmt.Errorf("platform: two platforms named %q", name)
		}
		r.byName[name] = p
	}
	return r, nil
}

// Lookup returns the platform named name (a line's or a call's Platform).
func (r Registry) Lookup(name string) (Platform, bool) {
	p, ok := r.byName[name]
	return p, ok
}
