// Package listing holds the cursor pagination every list endpoint shares: newest first,
// `limit` 1-100 (default 20), `starting_after=<id>` (the page after a cursor, older
// items) or `ending_before=<id>` (the page before it, newer items), and the id range a
// `created[gte|lte]` filter becomes.
package listing

// Limits of ?limit=.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Query asks for one page. Ids sort by creation time, so every bound is an id bound.
//
// StartingAfter is the id of the last item of the previous page: the page holds the
// newest items below it. EndingBefore is the id of the first item of the next page (the
// newer one): the page holds the items just above it, still newest first. At most one
// of them is set. IDFrom and IDTo (inclusive, "" for none) are the id range of a
// creation-time filter (ident.Floor and ident.Ceil of its times).
type Query struct {
	Limit         int
	StartingAfter string
	EndingBefore  string
	IDFrom, IDTo  string
}

// Bound is one end of an id range.
type Bound struct {
	ID        string // "" for no bound
	Inclusive bool
}

// Range returns the ids a query may return: the cursor and the creation-time range
// together, the tighter of the two at each end.
func (q Query) Range() (lo, hi Bound) {
	lo = Bound{ID: q.IDFrom, Inclusive: true}
	if q.EndingBefore != "" && q.EndingBefore >= lo.ID {
		lo = Bound{ID: q.EndingBefore}
	}
	hi = Bound{ID: q.IDTo, Inclusive: true}
	if q.StartingAfter != "" && (hi.ID == "" || q.StartingAfter <= hi.ID) {
		hi = Bound{ID: q.StartingAfter}
	}
	return lo, hi
}

// Empty reports whether no id can fall in the range.
func Empty(lo, hi Bound) bool {
	if lo.ID == "" || hi.ID == "" {
		return false
	}
	if lo.Inclusive && hi.Inclusive {
		return lo.ID > hi.ID
	}
	return lo.ID >= hi.ID
}

// In reports whether id falls in the range.
func In(id string, lo, hi Bound) bool {
	if lo.ID != "" && (id < lo.ID || id == lo.ID && !lo.Inclusive) {
		return false
	}
	if hi.ID != "" && (id > hi.ID || id == hi.ID && !hi.Inclusive) {
		return false
	}
	return true
}

// Ascending reports whether a store reads the range oldest first: for ending_before,
// whose page is the items nearest above the cursor.
func (q Query) Ascending() bool { return q.EndingBefore != "" }

// Want is how many items a store returns at most: Limit+1, the one more saying whether
// more exist.
func (q Query) Want() int {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	return limit + 1
}

// Page cuts items fetched with Limit+1 down to Limit and says whether more exist.
func Page[T any](items []T, limit int) ([]T, bool) {
	if len(items) > limit {
		return items[:limit], true
	}
	return items, false
}

// PageOf is Page for a whole query. Stores return items newest first; for ending_before
// they are the Limit+1 nearest above the cursor, so the one too many is the newest, the
// first: has_more then says newer items exist (Stripe's meaning).
func PageOf[T any](items []T, q Query) ([]T, bool) {
	limit := q.Want() - 1
	if len(items) <= limit {
		return items, false
	}
	if q.Ascending() {
		return items[len(items)-limit:], true
	}
	return items[:limit], true
}

// Select picks a query's items from a whole list held in memory, newest first (lists
// bounded by a per-account limit: API keys, webhook endpoints, an assistant's versions),
// returning up to Limit+1 of them as a store would.
func Select[T any](all []T, id func(T) string, q Query) []T {
	lo, hi := q.Range()
	var in []T
	for _, v := range all {
		if In(id(v), lo, hi) {
			in = append(in, v)
		}
	}
	want := q.Want()
	if len(in) <= want {
		return in
	}
	if q.Ascending() {
		return in[len(in)-want:]
	}
	return in[:want]
}
