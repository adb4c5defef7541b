package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/erasure"
	"github.com/bridgeline/bridgeline/shared/store"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// retentionSetter is what `admin account retention` needs of a store beyond store.Store.
type retentionSetter interface {
	SetCallRetention(ctx context.Context, accountID string, days *int) (account.Account, error)
}

var (
	_ retentionSetter = (*sqlite.Store)(nil)
	_ retentionSetter = (*dynamo.Store)(nil)
)

// accountRetention shows an account's call retention, after setting it when set is
// given: a number of days (0 deletes a call's data as soon as the retention job sees
// it ended), or "off" to keep calls' data (the default).
func accountRetention(ctx context.Context, s store.Store, cfg config.Config, accountID, set string, enc *json.Encoder) error {
	if accountID == "" {
		return fmt.Errorf("admin account retention: name the account: `account retention acct_... [--days N|off]`")
	}
	rs, ok := s.(retentionSetter)
	if !ok {
		return fmt.Errorf("admin account retention: the %s store keeps no retention settings", cfg.Store)
	}
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("admin account retention: account %q: %w", accountID, err)
	}
	if set != "" {
		var days *int
		if set != "off" {
			n, err := strconv.Atoi(set)
			if err != nil || n < 0 || n > erasure.MaxRetentionDays {
				return fmt.Errorf("admin account retention: --days must be 0-%d or off, not %q", erasure.MaxRetentionDays, set)
			}
			days = &n
		}
		if a, err = rs.SetCallRetention(ctx, accountID, days); err != nil {
			return fmt.Errorf("admin account retention: %w", err)
		}
	}
	return enc.Encode(map[string]any{
		"account_id":          a.ID,
		"call_retention_days": a.CallRetentionDays, // null: calls keep their data
		"retained_through":    a.RetainedThrough,
	})
}
