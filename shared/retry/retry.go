// Package retry runs the read, change, conditional write loop every service uses to
// change a record: the write is conditional on the revision that was read, and when
// another writer got there first (the store answers apierr.ErrConflict) the loop reads
// again, after a short random pause, at most MaxRetries times.
package retry

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
)

// MaxRetries bounds the loop under contention: after the first try and this many more,
// the last conflict is returned.
const MaxRetries = 64

// OnConflict calls attempt (read, change, write conditionally) until it returns anything
// but apierr.ErrConflict, pausing a few random milliseconds (up to 10, growing with the
// attempts) between tries, and returns its last error.
func OnConflict(attempt func() error) error {
	for n := 0; ; n++ {
		err := attempt()
		if !errors.Is(err, apierr.ErrConflict) || n >= MaxRetries {
			return err
		}
		pause(n)
	}
}

// pause waits before try n+1: a random 0 to min(n, 10) ms, so writers that collided do
// not collide again in step.
func pause(n int) {
	time.Sleep(time.Duration(rand.IntN(1+min(n, 10))) * time.Millisecond)
}
