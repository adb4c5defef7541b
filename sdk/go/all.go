//go:build go1.23

package bridgeline

import (
	"context"
	"errors"
	"iter"
)

// errStop ends Each when the loop over All stops early.
var errStop = errors.New("bridgeline: iteration stopped")

// All yields every item of a list, page after page, as Each does; a page that fails is
// yielded as the error, last. It needs Go 1.23 (range over func); older modules use Each.
func All[T any](ctx context.Context, page func(ctx context.Context, startingAfter string) (items []T, hasMore bool, err error), id func(T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		err := Each(ctx, page, id, func(it T) error {
			if !yield(it, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			var zero T
			yield(zero, err)
		}
	}
}
