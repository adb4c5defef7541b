//go:build go1.23

package bridgeline

import "iter"

// All is the rest of the walk as an iterator: each item with a nil error, then, if a
// page fails, one zero item with the error, last. It needs Go 1.23 (range over func);
// on older Go, loop with Next.
//
//	for a, err := range c.Assistants(ctx, nil).All() {
//		if err != nil {
//			return err
//		}
//		...
//	}
func (it *Iter[T]) All() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for it.Next() {
			if !yield(it.Current(), nil) {
				return
			}
		}
		if err := it.Err(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}
