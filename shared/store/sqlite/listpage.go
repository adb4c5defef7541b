package sqlite

import (
	"github.com/bridgeline/bridgeline/shared/listing"
)

// filtersListIndexesSchema indexes what the list filters select by (GET /v1/calls by
// status, direction and assistant_id; GET /v1/sessions by status). The columns are
// generated from the stored document, so no write has to keep them: SQLite computes them
// on every insert and update, and the indexes hold them. Each index ends with id, the
// list's order, so a filtered page is an index range read newest first.
const filtersListIndexesSchema = `
ALTER TABLE calls ADD COLUMN status TEXT GENERATED ALWAYS AS (json_extract(CAST(doc AS TEXT), '$.status')) VIRTUAL;
ALTER TABLE calls ADD COLUMN direction TEXT GENERATED ALWAYS AS (json_extract(CAST(doc AS TEXT), '$.direction')) VIRTUAL;
ALTER TABLE calls ADD COLUMN assistant_id TEXT GENERATED ALWAYS AS (json_extract(CAST(doc AS TEXT), '$.assistant_id')) VIRTUAL;
CREATE INDEX calls_by_status ON calls (account_id, status, id);
CREATE INDEX calls_by_direction ON calls (account_id, direction, id);
CREATE INDEX calls_by_assistant ON calls (account_id, assistant_id, id);
ALTER TABLE sessions ADD COLUMN status TEXT GENERATED ALWAYS AS (json_extract(CAST(doc AS TEXT), '$.status')) VIRTUAL;
CREATE INDEX sessions_by_status ON sessions (account_id, status, id);
`

// pageQuery is a list query for one page: SELECT cols FROM table WHERE where (with args)
// and the page's id bounds, newest first, at most Limit+1 rows. For ending_before the
// rows nearest above the cursor are read oldest first and put back newest first. ok is
// false when no id can match (a created range that ends before it starts).
func pageQuery(cols, table, where string, args []any, q listing.Query) (query string, out []any, ok bool) {
	lo, hi := q.Range()
	if listing.Empty(lo, hi) {
		return "", nil, false
	}
	out = append(out, args...)
	if lo.ID != "" {
		where += " AND id " + cmp(">", lo.Inclusive) + " ?"
		out = append(out, lo.ID)
	}
	if hi.ID != "" {
		where += " AND id " + cmp("<", hi.Inclusive) + " ?"
		out = append(out, hi.ID)
	}
	out = append(out, q.Want())
	if !q.Ascending() {
		return `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + where + ` ORDER BY id DESC LIMIT ?`, out, true
	}
	return `SELECT ` + cols + ` FROM (SELECT ` + cols + `, id AS page_id FROM ` + table + ` WHERE ` + where +
		` ORDER BY id ASC LIMIT ?) ORDER BY page_id DESC`, out, true
}

func cmp(op string, inclusive bool) string {
	if inclusive {
		return op + "="
	}
	return op
}
