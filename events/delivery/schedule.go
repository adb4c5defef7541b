package delivery

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Schedule is the wait before each attempt: s[0] before the first, s[n] before attempt
// n+1. After len(s) attempts the delivery gives up.
type Schedule []time.Duration

// DefaultSchedule is API.md's: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then give
// up, about 17.5 hours after the event.
func DefaultSchedule() Schedule {
	return Schedule{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour}
}

// maxRetryAfter bounds how long a receiver's Retry-After can push an attempt back.
const maxRetryAfter = 24 * time.Hour

// jitterFraction spreads retries by up to ±10% so failures caused by a burst of our own
// attempts do not come back as the same burst.
const jitterFraction = 0.1

// Next is the wait after attempt number made (1-based) failed, and false when the
// schedule is done. A Retry-After longer than the scheduled wait replaces it, up to 24 h.
func (s Schedule) Next(made int, retryAfter time.Duration) (time.Duration, bool) {
	if made < 1 || made >= len(s) {
		return 0, false
	}
	d := s[made]
	d += time.Duration((rand.Float64()*2 - 1) * jitterFraction * float64(d))
	if retryAfter > d {
		d = min(retryAfter, maxRetryAfter)
	}
	return d, true
}

// RetryAfter reads a Retry-After header: delay seconds or an HTTP date; 0 when absent or
// unreadable.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
