package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bridgeline/bridgeline/shared/config"
	"github.com/bridgeline/bridgeline/shared/store"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/sqlite"
)

// openStore opens the configured store.
func openStore(ctx context.Context, cfg config.Config) (store.Store, func() error, error) {
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
	case "dynamodb":
		// Table names from TABLE_* (as template.yaml sets them), else bridgeline-<table>.
		// DYNAMODB_ENDPOINT points at DynamoDB Local, whose tables are made on start;
		// without it the SDK's own resolution applies (AWS_ENDPOINT_URL, or AWS itself).
		tables := dynamo.TablesFromEnv(os.Getenv)
		if len(tables) == 0 {
			tables = dynamo.TablesWithPrefix("bridgeline-")
		}
		ep := cfg.DynamoDBEndpoint
		s, err := dynamo.Open(ctx, dynamo.Config{Tables: tables, Endpoint: ep, LocalOutbox: true})
		if err != nil {
			return nil, nil, err
		}
		if ep != "" {
			if err := s.CreateTables(ctx); err != nil {
				return nil, nil, err
			}
		}
		return s, func() error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("BRIDGELINE_STORE: unknown store %q", cfg.Store)
}
