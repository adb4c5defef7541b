package sipvideo

import (
	"net"
	"slices"
	"sync"
	"time"

	xrate "golang.org/x/time/rate"
)

// SourceLimits bound what one source address may ask of the bridge, which listens on the
// internet (providers signal from ranges of their own, so no allow-list can close it):
// new INVITEs at most InviteRate a second (bursts of InviteBurst), and failed digest
// answers (403) at most AuthFailures, one more each AuthFailureEvery. A source over
// either limit gets no answer at all until it is under again, as an INVITE no trunk
// takes gets none: a scanner learns nothing, and a password guesser gets AuthFailures
// tries and then one per AuthFailureEvery. A call's own requests (re-INVITE, BYE) are
// never counted.
type SourceLimits struct {
	InviteRate       float64       // default 20
	InviteBurst      int           // default 100
	AuthFailures     int           // default 10
	AuthFailureEvery time.Duration // default 30 s
}

func (l SourceLimits) withDefaults() SourceLimits {
	if l.InviteRate <= 0 {
		l.InviteRate = 20
	}
	if l.InviteBurst <= 0 {
		l.InviteBurst = 100
	}
	if l.AuthFailures <= 0 {
		l.AuthFailures = 10
	}
	if l.AuthFailureEvery <= 0 {
		l.AuthFailureEvery = 30 * time.Second
	}
	return l
}

// maxSources bounds the sources followed at once; past it, sources idle longest are
// forgotten first (an attacker with many addresses gets a fresh budget per address
// either way).
const maxSources = 20000

// sourceIdle is how long a source is followed after its last INVITE: by then both of
// its budgets are full again.
const sourceIdle = 10 * time.Minute

// sources follows the budgets of the sources that sent INVITEs lately.
type sources struct {
	limits SourceLimits
	mu     sync.Mutex
	by     map[string]*source
	swept  time.Time
}

type source struct {
	invites  *xrate.Limiter
	failures *xrate.Limiter
	seen     time.Time
	logged   time.Time // when its refusal was last logged
}

func newSources(l SourceLimits) *sources {
	return &sources{limits: l.withDefaults(), by: map[string]*source{}}
}

// host is a "host:port" source's address.
func host(src string) string {
	h, _, err := net.SplitHostPort(src)
	if err != nil {
		return src
	}
	return h
}

// get is src's budgets, made when it is new; s.mu held.
func (s *sources) get(src string, now time.Time) *source {
	h := host(src)
	if e := s.by[h]; e != nil {
		e.seen = now
		return e
	}
	if len(s.by) >= maxSources || now.Sub(s.swept) > time.Minute {
		s.sweep(now)
	}
	e := &source{
		invites:  xrate.NewLimiter(xrate.Limit(s.limits.InviteRate), s.limits.InviteBurst),
		failures: xrate.NewLimiter(xrate.Every(s.limits.AuthFailureEvery), s.limits.AuthFailures),
		seen:     now,
	}
	s.by[h] = e
	return e
}

// sweep forgets idle sources, and the oldest half when that is not enough.
func (s *sources) sweep(now time.Time) {
	s.swept = now
	for h, e := range s.by {
		if now.Sub(e.seen) > sourceIdle {
			delete(s.by, h)
		}
	}
	if len(s.by) < maxSources {
		return
	}
	seen := make([]time.Time, 0, len(s.by))
	for _, e := range s.by {
		seen = append(seen, e.seen)
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[len(seen)/2]
	for h, e := range s.by {
		if !e.seen.After(cut) {
			delete(s.by, h)
		}
	}
}

// admit says whether a new INVITE from src is answered; log says to log the refusal
// (once a minute per source).
func (s *sources) admit(src string, now time.Time) (ok, log bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.get(src, now)
	if e.failures.TokensAt(now) >= 1 && e.invites.AllowN(now, 1) {
		return true, false
	}
	if now.Sub(e.logged) >= time.Minute {
		e.logged = now
		return false, true
	}
	return false, false
}

// failed counts a failed digest answer from src.
func (s *sources) failed(src string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.get(src, now).failures.AllowN(now, 1)
}
