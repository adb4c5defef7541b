package sqlite

import (
	"context"
	"database/sql"
	"slices"

	"github.com/bridgeline/bridgeline/events/callevent"
	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/campaign"
)

var _ campaign.Store = (*Store)(nil)

const campaignsSchema = `
CREATE TABLE campaigns (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL,
	status     TEXT NOT NULL,
	active     INTEGER NOT NULL,
	revision   INTEGER NOT NULL,
	doc        BLOB NOT NULL
);
CREATE INDEX campaigns_by_account ON campaigns (account_id, id);
CREATE INDEX campaigns_by_status ON campaigns (account_id, status, id);
CREATE INDEX campaigns_active ON campaigns (active, id);
CREATE TABLE campaign_recipients (
	campaign_id TEXT NOT NULL,
	id          TEXT NOT NULL,
	status      TEXT NOT NULL,
	revision    INTEGER NOT NULL,
	doc         BLOB NOT NULL,
	PRIMARY KEY (campaign_id, id)
);
CREATE INDEX campaign_recipients_by_status ON campaign_recipients (campaign_id, status, id);
`

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CreateCampaign inserts c and its recipients in one transaction.
func (s *Store) CreateCampaign(ctx context.Context, c campaign.Campaign, rs []campaign.Recipient) error {
	c.Revision = 1
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO campaigns (id, account_id, status, active, revision, doc) VALUES (?, ?, ?, ?, ?, ?)`,
			c.ID, c.AccountID, c.Status, boolInt(c.Active), c.Revision, mustJSON(c))
		if isUnique(err) {
			return apierr.ErrConflict
		}
		if err != nil {
			return err
		}
		return insertRecipients(ctx, tx, `INSERT`, rs)
	})
}

// insertRecipients writes rs at their first revision with verb (INSERT: apierr.ErrConflict
// on an id taken; INSERT OR REPLACE: whatever was stored under it).
func insertRecipients(ctx context.Context, tx *sql.Tx, verb string, rs []campaign.Recipient) error {
	stmt, err := tx.PrepareContext(ctx, verb+` INTO campaign_recipients (campaign_id, id, status, revision, doc) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rs {
		r.Revision = 1
		if _, err := stmt.ExecContext(ctx, r.CampaignID, r.ID, r.Status, r.Revision, mustJSON(r)); err != nil {
			if isUnique(err) {
				return apierr.ErrConflict
			}
			return err
		}
	}
	return nil
}

// GetCampaign reads a campaign.
func (s *Store) GetCampaign(ctx context.Context, id string) (campaign.Campaign, error) {
	return getDoc[campaign.Campaign](ctx, s.db, `SELECT doc FROM campaigns WHERE id = ?`, id)
}

// ListCampaigns lists an account's campaigns newest first.
func (s *Store) ListCampaigns(ctx context.Context, accountID string, q campaign.ListQuery) ([]campaign.Campaign, error) {
	where, args := `account_id = ?`, []any{accountID}
	if q.Status != "" {
		where, args = where+` AND status = ?`, append(args, q.Status)
	}
	query, args, ok := pageQuery("doc", "campaigns", where, args, q.Query)
	if !ok {
		return nil, nil
	}
	return listDocs[campaign.Campaign](ctx, s.db, query, args...)
}

// UpdateCampaign writes c if its revision is unchanged, with evts in the outbox.
func (s *Store) UpdateCampaign(ctx context.Context, c campaign.Campaign, evts []callevent.Event) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		prev := c.Revision
		c.Revision++
		if err := mustChange(tx.ExecContext(ctx, `UPDATE campaigns SET status = ?, active = ?, revision = ?, doc = ? WHERE id = ? AND revision = ?`,
			c.Status, boolInt(c.Active), c.Revision, mustJSON(c), c.ID, prev)); err != nil {
			return err
		}
		return InsertEvents(ctx, tx, evts)
	})
}

// ActiveCampaigns lists the campaigns the runner has work on, by id.
func (s *Store) ActiveCampaigns(ctx context.Context, afterID string, limit int) ([]campaign.Campaign, error) {
	return listDocs[campaign.Campaign](ctx, s.db, `SELECT doc FROM campaigns WHERE active = 1 AND id > ? ORDER BY id LIMIT ?`, afterID, limit)
}

// GetRecipient reads one recipient of a campaign.
func (s *Store) GetRecipient(ctx context.Context, campaignID, id string) (campaign.Recipient, error) {
	return getDoc[campaign.Recipient](ctx, s.db, `SELECT doc FROM campaign_recipients WHERE campaign_id = ? AND id = ?`, campaignID, id)
}

// ListRecipients pages a campaign's recipients by id, up to Limit+1.
func (s *Store) ListRecipients(ctx context.Context, campaignID string, q campaign.RecipientQuery) ([]campaign.Recipient, error) {
	where, args := `campaign_id = ? AND id > ?`, []any{campaignID, q.After}
	if q.Before != "" {
		where, args = `campaign_id = ? AND id < ?`, []any{campaignID, q.Before}
	}
	if q.Status != "" {
		where, args = where+` AND status = ?`, append(args, q.Status)
	}
	if q.End != "" {
		where, args = where+` AND id < ?`, append(args, q.End)
	}
	if q.Before != "" {
		out, err := listDocs[campaign.Recipient](ctx, s.db, `SELECT doc FROM campaign_recipients WHERE `+where+` ORDER BY id DESC LIMIT ?`,
			append(args, q.Limit+1)...)
		slices.Reverse(out)
		return out, err
	}
	return listDocs[campaign.Recipient](ctx, s.db, `SELECT doc FROM campaign_recipients WHERE `+where+` ORDER BY id LIMIT ?`,
		append(args, q.Limit+1)...)
}

func updateRecipient(ctx context.Context, tx *sql.Tx, r campaign.Recipient) error {
	prev := r.Revision
	r.Revision++
	return mustChange(tx.ExecContext(ctx, `UPDATE campaign_recipients SET status = ?, revision = ?, doc = ? WHERE campaign_id = ? AND id = ? AND revision = ?`,
		r.Status, r.Revision, mustJSON(r), r.CampaignID, r.ID, prev))
}

// UpdateRecipient writes r if its revision is unchanged.
func (s *Store) UpdateRecipient(ctx context.Context, r campaign.Recipient) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return updateRecipient(ctx, tx, r) })
}

// ClaimRecipient writes r if its revision is unchanged and its campaign is running.
func (s *Store) ClaimRecipient(ctx context.Context, r campaign.Recipient) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM campaigns WHERE id = ? AND status = ?`, r.CampaignID, campaign.StatusRunning).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return apierr.ErrConflict
		}
		return updateRecipient(ctx, tx, r)
	})
}

// PutRecipients writes recipients in one transaction, whatever was stored under their
// ids.
func (s *Store) PutRecipients(ctx context.Context, rs []campaign.Recipient) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return insertRecipients(ctx, tx, `INSERT OR REPLACE`, rs) })
}

// DropRecipients deletes a campaign's recipients from id from on.
func (s *Store) DropRecipients(ctx context.Context, campaignID, from string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM campaign_recipients WHERE campaign_id = ? AND id >= ?`, campaignID, from)
	return err
}

// RecipientCounts counts a campaign's recipients per status (ids before end; "" all).
func (s *Store) RecipientCounts(ctx context.Context, campaignID, end string) (map[string]int, error) {
	query, args := `SELECT status, count(*) FROM campaign_recipients WHERE campaign_id = ? GROUP BY status`, []any{campaignID}
	if end != "" {
		query, args = `SELECT status, count(*) FROM campaign_recipients WHERE campaign_id = ? AND id < ? GROUP BY status`, append(args, end)
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}
