package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/bridgeline/bridgeline/shared/account"
	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/httpapi"
	"github.com/bridgeline/bridgeline/shared/store"
)

// accountBranding shows an account's branding (as GET /v1/account answers it), after
// changing what set names (flag name to value: name, color, logo, support-url), checked
// as PATCH /v1/account checks them: a logo is read from its file.
func accountBranding(ctx context.Context, s store.Store, cfg config.Config, accountID string, set map[string]*string, enc *json.Encoder) error {
	if accountID == "" {
		return fmt.Errorf("admin account branding: name the account: `account branding acct_... [--name NAME] [--color #rrggbb] [--logo FILE|none] [--support-url URL|none]`")
	}
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return fmt.Errorf("admin account branding: account %q: %w", accountID, err)
	}
	var c account.BrandingChange
	if v := set["name"]; v != nil {
		if err := account.ValidName(*v); err != nil {
			return fmt.Errorf("admin account branding: --name: %w", err)
		}
		c.Name = v
	}
	if v := set["color"]; v != nil {
		if err := account.ValidColor(*v); err != nil {
			return fmt.Errorf("admin account branding: --color: %w", err)
		}
		c.BrandColor = v
	}
	if v := set["support-url"]; v != nil {
		u := *v
		if u == "none" {
			u = ""
		}
		if err := account.ValidSupportURL(cfg.Webhooks, u); err != nil {
			return fmt.Errorf("admin account branding: --support-url: %w", err)
		}
		c.SupportURL = &u
	}
	if v := set["logo"]; v != nil {
		if *v == "none" {
			c.RemoveLogo = true
		} else {
			data, err := os.ReadFile(*v)
			if err != nil {
				return fmt.Errorf("admin account branding: --logo: %w", err)
			}
			logo, err := account.ParseLogo(data, time.Now())
			if err != nil {
				return fmt.Errorf("admin account branding: --logo %s: %w", *v, err)
			}
			c.Logo = &logo
		}
	}
	if c != (account.BrandingChange{}) {
		if a, err = s.SetBranding(ctx, accountID, c); err != nil {
			return fmt.Errorf("admin account branding: %w", err)
		}
	}
	return enc.Encode(httpapi.AccountView(a))
}
