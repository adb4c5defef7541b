package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/events/delivery"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/listing"
	"github.com/bridgeline/bridgeline/shared/webhookendpoint"
)

var (
	_ webhookendpoint.Store = (*Store)(nil)
	_ delivery.Log          = (*Store)(nil)
	_ delivery.Outbox       = (*Store)(nil)
)

// webhooksSchema adds webhook endpoints and the delivery state on top of the events
// outbox: a fan-out mark on each event, one row per (event, endpoint) delivery with its
// next attempt time and claim, and the attempt log.
const webhooksSchema = `
ALTER TABLE events ADD COLUMN dispatched INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_undispatched ON events (id) WHERE dispatched = 0;
CREATE INDEX events_by_account_type ON events (account_id, type, id);
CREATE TABLE webhook_endpoints (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, id);
CREATE TABLE webhook_deliveries (
	id              TEXT PRIMARY KEY,
	event_id        TEXT NOT NULL REFERENCES events(id),
	endpoint_id     TEXT NOT NULL,
	state           TEXT NOT NULL,
	next_attempt_at TEXT NOT NULL,
	claimed_at      TEXT,
	doc             BLOB NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
	WHERE state = 'pending' AND claimed_at IS NULL;
CREATE INDEX webhook_deliveries_claimed ON webhook_deliveries (claimed_at) WHERE claimed_at IS NOT NULL;
CREATE TABLE webhook_attempts (
	id       TEXT PRIMARY KEY,
	event_id TEXT NOT NULL,
	doc      BLOB NOT NULL
);
CREATE INDEX webhook_attempts_by_event ON webhook_attempts (event_id, id);
`

// CreateWebhookEndpoint inserts an endpoint while its account has fewer than max (one
// statement: the count and the insert are atomic).
func (s *Store) CreateWebhookEndpoint(ctx context.Context, e webhookendpoint.Endpoint, max int) error {
	res, err := s.exec(ctx,
		`INSERT INTO webhook_endpoints (id, account_id, revision, doc)
		 SELECT ?1, ?2, ?3, ?4
		 WHERE (SELECT count(*) FROM webhook_endpoints WHERE account_id = ?2) < ?5`,
		e.ID, e.AccountID, e.Revision, mustJSON(e), max)
	if isUnique(err) {
		return apierr.ErrConflict
	}
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return webhookendpoint.ErrLimit
	}
	return nil
}

// GetWebhookEndpoint reads an endpoint.
func (s *Store) GetWebhookEndpoint(ctx context.Context, id string) (webhookendpoint.Endpoint, error) {
	return getDoc[webhookendpoint.Endpoint](ctx, s.db, `SELECT doc FROM webhook_endpoints WHERE id = ?`, id)
}

// ListWebhookEndpoints lists an account's endpoints newest first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, q listing.Query) ([]webhookendpoint.Endpoint, error) {
	query, args, ok := pageQuery("doc", "webhook_endpoints", `account_id = ?`, []any{accountID}, q)
	if !ok {
		return nil, nil
	}
	return listDocs[webhookendpoint.Endpoint](ctx, s.db, query, args...)
}

// UpdateWebhookEndpoint writes e if its revision is unchanged.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, e webhookendpoint.Endpoint) error {
	prev := e.Revision
	e.Revision++
	return mustChange(s.exec(ctx,
		`UPDATE webhook_endpoints SET revision = ?, doc = ? WHERE id = ? AND revision = ?`,
		e.Revision, mustJSON(e), e.ID, prev))
}

// DeleteWebhookEndpoint removes an endpoint and cancels its pending deliveries.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		err := mustChange(tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ?`, id))
		if errors.Is(err, apierr.ErrConflict) {
			return apierr.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE webhook_deliveries SET state = 'canceled',
				doc = json_set(doc, '$.state', 'canceled')
			 WHERE endpoint_id = ? AND state = 'pending' AND claimed_at IS NULL`, id)
		return err
	})
}

const eventColumns = `id, account_id, type, created_at, data`

func scanEvent(row interface{ Scan(...any) error }) (callevent.Event, error) {
	var e callevent.Event
	var created string
	var data []byte
	if err := row.Scan(&e.ID, &e.AccountID, &e.Type, &created, &data); err != nil {
		return e, err
	}
	t, err := time.Parse(timeLayout, created)
	if err != nil {
		return e, fmt.Errorf("event %s created_at %q: %w", e.ID, created, err)
	}
	e.CreatedAt, e.Data = t, data
	return e, nil
}

func queryEvents(ctx context.Context, q querier, query string, args ...any) ([]callevent.Event, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []callevent.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// GetEvent reads one event of the outbox.
func (s *Store) GetEvent(ctx context.Context, id string) (callevent.Event, error) {
	e, err := scanEvent(s.db.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, apierr.ErrNotFound
	}
	return e, err
}

// eventRedeliveriesSchema counts each event's redeliveries (CountRedelivery).
const eventRedeliveriesSchema = `
ALTER TABLE events ADD COLUMN redeliveries INTEGER NOT NULL DEFAULT 0;
`

// CountRedelivery counts one redelivery of the event, unless it has max already: one
// conditional UPDATE, so concurrent requests cannot pass max together.
func (s *Store) CountRedelivery(ctx context.Context, eventID string, max int) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		return mustChange(tx.ExecContext(ctx,
			`UPDATE events SET redeliveries = redeliveries + 1 WHERE id = ? AND redeliveries < ?`, eventID, max))
	})
}

// ListEvents lists an account's events newest first, of one type when typ is set.
func (s *Store) ListEvents(ctx context.Context, accountID, typ string, q listing.Query) ([]callevent.Event, error) {
	where, args := `account_id = ?`, []any{accountID}
	if typ != "" {
		where, args = where+` AND type = ?`, append(args, typ)
	}
	query, args, ok := pageQuery(eventColumns, "events", where, args, q)
	if !ok {
		return nil, nil
	}
	return queryEvents(ctx, s.db, query, args...)
}

// ListDeliveryAttempts lists an event's attempts oldest first.
func (s *Store) ListDeliveryAttempts(ctx context.Context, eventID string) ([]delivery.Attempt, error) {
	return listDocs[delivery.Attempt](ctx, s.db,
		`SELECT doc FROM webhook_attempts WHERE event_id = ? ORDER BY id`, eventID)
}

// DeliveryAttemptsPage lists up to limit of an event's attempts after startingAfter,
// oldest first, and says whether more follow.
func (s *Store) DeliveryAttemptsPage(ctx context.Context, eventID, startingAfter string, limit int) ([]delivery.Attempt, bool, error) {
	as, err := listDocs[delivery.Attempt](ctx, s.db,
		`SELECT doc FROM webhook_attempts WHERE event_id = ? AND id > ? ORDER BY id LIMIT ?`, eventID, startingAfter, limit+1)
	if err != nil || len(as) <= limit {
		return as, false, err
	}
	return as[:limit], true, nil
}

// RecordDeliveryAttempt logs an attempt; recording the same attempt twice is a no-op.
func (s *Store) RecordDeliveryAttempt(ctx context.Context, a delivery.Attempt) error {
	_, err := s.exec(ctx,
		`INSERT INTO webhook_attempts (id, event_id, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		a.ID, a.EventID, mustJSON(a))
	return err
}

// UndispatchedEvents returns events not fanned out yet, oldest first.
func (s *Store) UndispatchedEvents(ctx context.Context, limit int) ([]callevent.Event, error) {
	return queryEvents(ctx, s.db, `SELECT `+eventColumns+` FROM events WHERE dispatched = 0 ORDER BY id LIMIT ?`, limit)
}

// AddDeliveries marks the event fanned out and inserts its deliveries, in one transaction.
func (s *Store) AddDeliveries(ctx context.Context, eventID string, ds []delivery.Delivery) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := mustChange(tx.ExecContext(ctx,
			`UPDATE events SET dispatched = 1 WHERE id = ? AND dispatched = 0`, eventID)); err != nil {
			return err
		}
		return insertDeliveries(ctx, tx, ds)
	})
}

// AddRedeliveries inserts deliveries of events already fanned out.
func (s *Store) AddRedeliveries(ctx context.Context, ds []delivery.Delivery) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return insertDeliveries(ctx, tx, ds) })
}

func insertDeliveries(ctx context.Context, tx *sql.Tx, ds []delivery.Delivery) error {
	for _, d := range ds {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, state, next_attempt_at, doc)
			 VALUES (?, ?, ?, ?, ?, ?)`,
			d.ID, d.EventID, d.EndpointID, d.State, d.NextAttemptAt.UTC().Format(timeLayout), mustJSON(d))
		if err != nil {
			return fmt.Errorf("insert delivery %s: %w", d.ID, err)
		}
	}
	return nil
}

// deliveriesByEndpointSchema lets a claim take each endpoint's due deliveries through an
// index, so a long backlog at one endpoint costs the others nothing.
const deliveriesByEndpointSchema = `
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at)
	WHERE state = 'pending' AND claimed_at IS NULL;
`

// ClaimDueDeliveries marks due, unclaimed, pending deliveries as in flight, within lim
// (in all, per endpoint, per account), endpoints with the longest-waiting delivery first.
// The endpoints come from the due deliveries; each endpoint's are then one indexed query.
func (s *Store) ClaimDueDeliveries(ctx context.Context, now time.Time, lim delivery.ClaimLimits) ([]delivery.Delivery, error) {
	var out []delivery.Delivery
	err := s.tx(ctx, func(tx *sql.Tx) error {
		at := now.UTC().Format(timeLayout)
		// The endpoints with a delivery due, from the due deliveries alone (the partial
		// index webhook_deliveries_due): a claim costs what is due, not a read of every
		// customer's endpoints. A delivery whose endpoint was deleted has none to join.
		rows, err := tx.QueryContext(ctx, `SELECT d.endpoint_id, e.account_id, min(d.next_attempt_at)
			FROM webhook_deliveries d INDEXED BY webhook_deliveries_due JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.state = 'pending' AND d.claimed_at IS NULL AND d.next_attempt_at <= ?
			GROUP BY d.endpoint_id`, at)
		if err != nil {
			return err
		}
		type due struct {
			id, account, first string
		}
		var dues []due
		for rows.Next() {
			var d due
			if err := rows.Scan(&d.id, &d.account, &d.first); err != nil {
				rows.Close()
				return err
			}
			if lim.Room(d.id, d.account, 0, 0) > 0 {
				dues = append(dues, d)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		slices.SortFunc(dues, func(a, b due) int { return strings.Compare(a.first, b.first) })
		out = nil
		taken := map[string]int{} // account id -> claimed in this call
		for _, d := range dues {
			if len(out) >= lim.Limit {
				break
			}
			room := min(lim.Room(d.id, d.account, 0, taken[d.account]), lim.Limit-len(out))
			if room <= 0 {
				continue
			}
			ds, err := listDocs[delivery.Delivery](ctx, tx,
				`SELECT doc FROM webhook_deliveries
				 WHERE endpoint_id = ? AND state = 'pending' AND claimed_at IS NULL AND next_attempt_at <= ?
				 ORDER BY next_attempt_at LIMIT ?`, d.id, at, room)
			if err != nil {
				return err
			}
			for _, dl := range ds {
				if _, err := tx.ExecContext(ctx,
					`UPDATE webhook_deliveries SET claimed_at = ? WHERE id = ?`, at, dl.ID); err != nil {
					return err
				}
			}
			taken[d.account] += len(ds)
			out = append(out, ds...)
		}
		return nil
	})
	return out, err
}

// FinishDelivery stores d, releases its claim and logs a, in one transaction. A delivery
// canceled meanwhile (its endpoint deleted) stays canceled.
func (s *Store) FinishDelivery(ctx context.Context, d delivery.Delivery, a *delivery.Attempt) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, claimed_at = NULL, doc = ?
			 WHERE id = ? AND state = 'pending'`,
			d.State, d.NextAttemptAt.UTC().Format(timeLayout), mustJSON(d), d.ID)
		if err != nil {
			return err
		}
		if a == nil {
			return nil
		}
		_, err = tx.ExecContext(ctx,
			`INSERT INTO webhook_attempts (id, event_id, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			a.ID, a.EventID, mustJSON(*a))
		return err
	})
}

// ReleaseDeliveryClaims makes deliveries claimed before the given time due again, and
// cancels pending deliveries whose endpoint was deleted while they were claimed.
func (s *Store) ReleaseDeliveryClaims(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE webhook_deliveries SET claimed_at = NULL WHERE claimed_at IS NOT NULL AND claimed_at < ?`,
			before.UTC().Format(timeLayout))
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx,
			`UPDATE webhook_deliveries SET state = 'canceled', doc = json_set(doc, '$.state', 'canceled')
			 WHERE state = 'pending' AND claimed_at IS NULL
			   AND endpoint_id NOT IN (SELECT id FROM webhook_endpoints)`)
		return err
	})
	return int(n), err
}

// NextDeliveryDue is the earliest next attempt of a pending, unclaimed delivery.
func (s *Store) NextDeliveryDue(ctx context.Context) (time.Time, bool, error) {
	var at sql.NullString
	err := s.db.QueryRowContext(ctx,
		`SELECT min(next_attempt_at) FROM webhook_deliveries WHERE state = 'pending' AND claimed_at IS NULL`).Scan(&at)
	if err != nil || !at.Valid {
		return time.Time{}, false, err
	}
	t, err := time.Parse(timeLayout, at.String)
	return t, err == nil, err
}
