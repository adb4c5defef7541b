// Package listing holds the cursor pagination every list endpoint shares: newest first,
// `limit` 1-100 (default 20) and `starting_after=<id>`.
package listing

// Limits of ?limit=.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Query asks for one page. StartingAfter is the id of the last item of the previous page;
// because ids sort by creation time, the next page is the ids below it.
type Query struct {
	Limit         int
	StartingAfter string
}

// Page cuts items fetched with Limit+1 down to Limit and says whether more exist.
func Page[T any](items []T, limit int) ([]T, bool) {
	if len(items) > limit {
		return items[:limit], true
	}
	return items, false
}
