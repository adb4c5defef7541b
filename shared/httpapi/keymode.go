package httpapi

// Test mode: which routes an sk_test_ key may use. The rule is written once, here, and
// every route declares how it applies (Route.Keys):
//
//   - TestKeysAllowed: the route reaches no real network whatever it names (reads,
//     assistant drafts, webhook endpoints, the sim, web calls).
//   - LiveKeyOnly: the route reaches a real network by what it is (SIP trunks and the
//     SIP lines on them). The middleware refuses a test key before the handler runs.
//   - LiveKeyForRealResource: the route reaches a real network when its resource does (a
//     session or call on a platform whose Kind.TestKeys is false, a line on such a
//     platform, an assistant a real line runs). The handler finds the resource and asks
//     requireLiveKey, the one helper, with what it found; a handler of such a route that
//     answers a test key without asking is a bug the API refuses to hide (500).
//
// A refusal is 403 live_key_required naming the route and why. Public routes (the
// internal receivers, the sim's pages) take no API key and declare nothing. A route that
// declares nothing is treated as LiveKeyOnly: a new route is closed to test keys until it
// says otherwise (TestEveryRouteDeclaresAKeyPolicy fails until it does).

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/call"
	"github.com/bridgeline/bridgeline/shared/platform"
	"github.com/bridgeline/bridgeline/shared/platform/sim"
	"github.com/bridgeline/bridgeline/shared/platform/sip"
	"github.com/bridgeline/bridgeline/shared/platform/web"
)

// KeyMode is which keys a route takes.
type KeyMode uint8

// Key modes; the zero value is undeclared (treated as LiveKeyOnly).
const (
	KeyModeUndeclared KeyMode = iota
	TestKeysAllowed
	LiveKeyOnly
	LiveKeyForRealResource
)

func (m KeyMode) String() string {
	switch m {
	case TestKeysAllowed:
		return "test keys allowed"
	case LiveKeyOnly:
		return "live key only"
	case LiveKeyForRealResource:
		return "live key for a real-network resource"
	}
	return "undeclared"
}

// KeyPolicy is a route's declared rule for sk_test_ keys.
type KeyPolicy struct {
	Mode KeyMode
	// Why says, for LiveKeyOnly, what real network the route reaches: the end of "<route>
	// needs an sk_live_ key: ...".
	Why string
}

// TestKeys is the policy of a route that reaches no real network.
func TestKeys() KeyPolicy { return KeyPolicy{Mode: TestKeysAllowed} }

// LiveOnly is the policy of a route that always reaches a real network; why completes
// the refusal's message.
func LiveOnly(why string) KeyPolicy { return KeyPolicy{Mode: LiveKeyOnly, Why: why} }

// LiveForRealResource is the policy of a route that reaches a real network when its
// resource does: the handler asks requireLiveKey.
func LiveForRealResource() KeyPolicy { return KeyPolicy{Mode: LiveKeyForRealResource} }

// withKeys sets policy on every route of rs (a route group whose routes share one rule).
func withKeys(policy KeyPolicy, rs []Route) []Route {
	for i := range rs {
		rs[i].Keys = policy
	}
	return rs
}

// sipNetwork is the reason of the SIP trunk and SIP line routes.
const sipNetwork = "SIP trunks and the numbers on them carry calls on the real phone network"

// platformKinds are the calling platforms the API knows by name, to ask a record's
// platform whether it takes test keys. A name not here is treated as a real network.
var platformKinds = map[string]platform.Kind{sim.Name: sim.Kind{}, sip.Name: sip.Kind{}, web.Name: web.Kind{}}

// liveResource is what requireLiveKey is told about a route's resource: whether it is
// live-mode (it reaches a real network, or it is a live key), and why (the end of the
// refusal's message).
type liveResource struct {
	live bool
	why  string
}

// notLive is a resource a test key may change: it reaches no real network.
var notLive = liveResource{}

// onPlatform is a resource (what: "call call_...", "line line_...") on the named
// platform; a name the API does not know counts as a real network.
func onPlatform(what, name string) liveResource {
	k, ok := platformKinds[name]
	if !ok {
		return liveResource{true, fmt.Sprintf("%s is on the %q platform, which may reach a real network", what, name)}
	}
	return onKind(what, k)
}

// onKind is a resource on platform k.
func onKind(what string, k platform.Kind) liveResource {
	if k.TestKeys() {
		return notLive
	}
	reaches := "a real network"
	if n, ok := k.(platform.Networked); ok {
		reaches = n.Network()
	}
	return liveResource{true, fmt.Sprintf("%s is on the %s platform, which reaches %s", what, k.Name(), reaches)}
}

// keyRule is the route's policy as a request carries it: requireLiveKey reads it, and
// notes that it was asked.
type keyRule struct {
	route  string // "POST /v1/calls/{id}/transfer"
	policy KeyPolicy
	asked  bool
}

type keyRuleCtx struct{}

// liveKeyRequired is the refusal of route.
func liveKeyRequired(route, why string) error {
	return apierr.New(apierr.CodeLiveKeyRequired, fmt.Sprintf("%s needs an sk_live_ key: %s", route, why))
}

// keyMode enforces the static part of rt's policy (LiveKeyOnly, or undeclared) after
// authentication, and hands the policy to the handler for requireLiveKey.
func (a *API) keyMode(rt Route, next http.Handler) http.Handler {
	route := rt.Method + " " + rt.Pattern
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live := AccountFrom(r.Context()).Live
		switch rt.Keys.Mode {
		case KeyModeUndeclared:
			if !live {
				a.writeError(w, r, liveKeyRequired(route, "the route declares no test-mode rule, so it takes live keys only"))
				return
			}
		case LiveKeyOnly:
			if !live {
				a.writeError(w, r, liveKeyRequired(route, rt.Keys.Why))
				return
			}
		}
		rule := &keyRule{route: route, policy: rt.Keys}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRuleCtx{}, rule)))
	})
}

// errKeyRuleMisused is a handler asking requireLiveKey on a route that did not declare
// LiveKeyForRealResource: a programming error, answered 500.
var errKeyRuleMisused = errors.New("httpapi: requireLiveKey asked on a route that does not declare LiveKeyForRealResource")

// requireLiveKey is the one check of a LiveKeyForRealResource route's resource: a test
// key is refused (403 live_key_required naming the route and why) when the resource is
// live. Handlers call it before they change anything; resource reads the resource
// (after its ownership check, so another account's id stays 404, which resource then
// returns as its error) and is called for test keys only, so a live key's request
// reads nothing more.
func requireLiveKey(r *http.Request, resource func() (liveResource, error)) error {
	rule, _ := r.Context().Value(keyRuleCtx{}).(*keyRule)
	if rule == nil || rule.policy.Mode != LiveKeyForRealResource {
		return errKeyRuleMisused
	}
	rule.asked = true
	if AccountFrom(r.Context()).Live {
		return nil
	}
	res, err := resource()
	if err != nil || !res.live {
		return err
	}
	return liveKeyRequired(rule.route, res.why)
}

// keyRuleUnasked reports a LiveKeyForRealResource route whose handler answered a test
// key without asking requireLiveKey.
func keyRuleUnasked(r *http.Request) bool {
	rule, _ := r.Context().Value(keyRuleCtx{}).(*keyRule)
	return rule != nil && rule.policy.Mode == LiveKeyForRealResource && !rule.asked && !AccountFrom(r.Context()).Live
}

// liveKeyForStoredCall asks the key rule about the path's call, read with get: a call on
// a real platform takes a live key; a call the account does not have is left to the
// route's own 404.
func liveKeyForStoredCall(r *http.Request, get func(context.Context, string) (call.Call, error)) error {
	return requireLiveKey(r, func() (liveResource, error) {
		c, err := get(r.Context(), r.PathValue("id"))
		if errors.Is(err, apierr.ErrNotFound) || (err == nil && c.AccountID != AccountFrom(r.Context()).ID) {
			return notLive, nil
		}
		if err != nil {
			return notLive, fmt.Errorf("get call %s: %w", r.PathValue("id"), err)
		}
		return onPlatform("call "+c.ID, c.Platform), nil
	})
}
