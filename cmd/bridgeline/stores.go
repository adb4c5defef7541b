package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

// Store is every store interface the stack uses.
type Store = storetest.Store

// openStore opens the configured store.
func openStore(ctx context.Context, cfg config.Config) (Store, func() error, error) {
	switch cfg.Store {
	case "sqlite":
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, nil, err
		}
		s, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, "bridgeline.db"))
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
	return nil, nil, fmt.Errorf("store %q is not available in this build", cfg.Store)
}
