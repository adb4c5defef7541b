package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/destination"
	"github.com/bridgeline/bridgeline/shared/session"
	"github.com/bridgeline/bridgeline/shared/store"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// sessionLimiter is what `admin account limits` needs of a store beyond store.Store.
type sessionLimiter interface {
	SetMaxConcurrentSessions(ctx context.Context, accountID string, limit *int) (account.Account, error)
	SessionSlotsInUse(ctx context.Context, accountID string) (int, error)
	SetOutbound(ctx context.Context, accountID string, o account.Outbound) (account.Account, error)
}

// limitFlags are `admin account limits`' settings; "" leaves one as it is.
type limitFlags struct {
	sessions  string // N or default
	minutes   string // N or default
	countries string // US,GB or none or default
}

// outbound is o with the flags' changes.
func (f limitFlags) outbound(o account.Outbound) (account.Outbound, error) {
	switch f.minutes {
	case "":
	case "default":
		o.DailyOutboundMinutes = nil
	default:
		n, err := strconv.Atoi(f.minutes)
		if err != nil || n < 0 || n > 1000000 {
			return o, fmt.Errorf("admin account limits: --daily-outbound-minutes must be 0-1000000 or default, not %q", f.minutes)
		}
		o.DailyOutboundMinutes = &n
	}
	switch f.countries {
	case "":
	case "default":
		o.AllowedDestinationCountries = nil
	case "none":
		o.AllowedDestinationCountries = []string{}
	default:
		cs, err := destination.ParseCountries("--allowed-destination-countries", strings.Split(f.countries, ","))
		if err != nil {
			return o, fmt.Errorf("admin account limits: %w", err)
		}
		o.AllowedDestinationCountries = cs
	}
	return o, nil
}

var (
	_ sessionLimiter = (*sqlite.Store)(nil)
	_ sessionLimiter = (*dynamo.Store)(nil)
)

// accountLimits shows an account's limit of live sessions and how many it holds, after
// setting its own limit when set is given (a number, or "default" to go back to
// MAX_CONCURRENT_SESSIONS).
func accountLimits(ctx context.Context, s store.Store, cfg config.Config, accountID string, f limitFlags, enc *json.Encoder) error {
	if accountID == "" {
		return fmt.Errorf("admin account limits: name the account: `account limits acct_... [--max-concurrent-sessions N|default]`")
	}
	lim, ok := s.(sessionLimiter)
	if !ok {
		return fmt.Errorf("admin account limits: the %s store keeps no session limits", cfg.Store)
	}
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("admin account limits: account %q: %w", accountID, err)
	}
	if set := f.sessions; set != "" {
		var own *int
		if set != "default" {
			n, err := strconv.Atoi(set)
			if err != nil || n < 0 || n > 10000 {
				return fmt.Errorf("admin account limits: --max-concurrent-sessions must be 0-10000 or default, not %q", set)
			}
			own = &n
		}
		if a, err = lim.SetMaxConcurrentSessions(ctx, accountID, own); err != nil {
			return fmt.Errorf("admin account limits: %w", err)
		}
	}
	if f.minutes != "" || f.countries != "" {
		o, err := f.outbound(a.Outbound)
		if err != nil {
			return err
		}
		if a, err = lim.SetOutbound(ctx, accountID, o); err != nil {
			return fmt.Errorf("admin account limits: %w", err)
		}
	}
	used, err := lim.SessionSlotsInUse(ctx, accountID)
	if err != nil {
		return fmt.Errorf("admin account limits: %w", err)
	}
	minutes := session.DefaultDailyOutboundMinutes
	if a.DailyOutboundMinutes != nil {
		minutes = *a.DailyOutboundMinutes
	}
	effective := cfg.MaxConcurrentSessions
	if a.MaxConcurrentSessions != nil {
		effective = *a.MaxConcurrentSessions
	}
	return enc.Encode(map[string]any{
		"account_id":              a.ID,
		"max_concurrent_sessions": effective,
		"own_limit":               a.MaxConcurrentSessions, // null: MAX_CONCURRENT_SESSIONS
		"default_limit":           cfg.MaxConcurrentSessions,
		"live_sessions":           used,
		// The outbound policy (shared/destination): null minutes is the default cap, null
		// countries each line's own country.
		"daily_outbound_minutes":        minutes,
		"own_daily_outbound_minutes":    a.DailyOutboundMinutes,
		"allowed_destination_countries": a.AllowedDestinationCountries,
	})
}
