package sqlite

import (
	"context"
	"database/sql"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/assistant"
)

var _ assistant.Store = (*Store)(nil)

// CreateAssistant inserts a new assistant.
func (s *Store) CreateAssistant(ctx context.Context, a assistant.Assistant) error {
	a.Versions = nil
	_, err := s.exec(ctx,
		`INSERT INTO assistants (id, account_id, status, revision, doc) VALUES (?, ?, ?, ?, ?)`,
		a.ID, a.AccountID, a.Status, a.Revision, mustJSON(a))
	if isUnique(err) {
		return apierr.ErrConflict
	}
	return err
}

// GetAssistant reads an assistant and its versions, oldest first.
func (s *Store) GetAssistant(ctx context.Context, id string) (assistant.Assistant, error) {
	a, err := getDoc[assistant.Assistant](ctx, s.db, `SELECT doc FROM assistants WHERE id = ?`, id)
	if err != nil {
		return a, err
	}
	a.Versions, err = listDocs[assistant.Version](ctx, s.db,
		`SELECT doc FROM versions WHERE assistant_id = ? ORDER BY number`, id)
	if a.Versions == nil {
		a.Versions = []assistant.Version{}
	}
	return a, err
}

// GetAssistantHead reads an assistant without its versions.
func (s *Store) GetAssistantHead(ctx context.Context, id string) (assistant.Assistant, error) {
	return getDoc[assistant.Assistant](ctx, s.db, `SELECT doc FROM assistants WHERE id = ?`, id)
}

// ListAssistants lists an account's assistants newest first, with their versions.
func (s *Store) ListAssistants(ctx context.Context, accountID string, q assistant.ListQuery) ([]assistant.Assistant, error) {
	status := q.Status
	if status == "all" {
		status = ""
	}
	query, args, ok := pageQuery("doc", "assistants", `account_id = ? AND (? = '' OR status = ?)`,
		[]any{accountID, status, status}, q.Query)
	if !ok {
		return nil, nil
	}
	list, err := listDocs[assistant.Assistant](ctx, s.db, query, args...)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Versions, err = listDocs[assistant.Version](ctx, s.db,
			`SELECT doc FROM versions WHERE assistant_id = ? ORDER BY number`, list[i].ID)
		if err != nil {
			return nil, err
		}
		if list[i].Versions == nil {
			list[i].Versions = []assistant.Version{}
		}
	}
	return list, nil
}

// UpdateAssistant writes a if the stored revision is still a.Revision.
func (s *Store) UpdateAssistant(ctx context.Context, a assistant.Assistant) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return updateAssistant(ctx, tx, a) })
}

func updateAssistant(ctx context.Context, tx *sql.Tx, a assistant.Assistant) error {
	prev := a.Revision
	a.Revision++
	a.Versions = nil
	return mustChange(tx.ExecContext(ctx,
		`UPDATE assistants SET status = ?, revision = ?, doc = ? WHERE id = ? AND revision = ?`,
		a.Status, a.Revision, mustJSON(a), a.ID, prev))
}

// PublishVersion inserts v and writes a in one transaction.
func (s *Store) PublishVersion(ctx context.Context, a assistant.Assistant, v assistant.Version) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := updateAssistant(ctx, tx, a); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO versions (id, assistant_id, number, doc) VALUES (?, ?, ?, ?)`,
			v.ID, v.AssistantID, v.Number, mustJSON(v))
		if isUnique(err) {
			return apierr.ErrConflict
		}
		return err
	})
}

// GetVersion reads one version.
func (s *Store) GetVersion(ctx context.Context, id string) (assistant.Version, error) {
	return getDoc[assistant.Version](ctx, s.db, `SELECT doc FROM versions WHERE id = ?`, id)
}
