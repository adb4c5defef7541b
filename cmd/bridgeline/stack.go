package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bridgeline/bridgeline/shared/config"
)

// stackState is what a running `bridgeline dev` tells `bridgeline admin` about its
// store, so that operator commands run beside `make run-dynamodb` write to the stack's
// DynamoDB Local and not to a SQLite file the stack never reads.
type stackState struct {
	PID              int    `json:"pid"`
	Store            string `json:"store"`
	DynamoDBEndpoint string `json:"dynamodb_endpoint,omitempty"`
}

func stackStatePath(dataDir string) string { return filepath.Join(dataDir, "stack.json") }

// writeStackState records the running stack's store in its data folder; the returned
// func removes it when the stack stops.
func writeStackState(cfg config.Config) (func(), error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(stackState{PID: os.Getpid(), Store: cfg.Store, DynamoDBEndpoint: cfg.DynamoDBEndpoint})
	path := stackStatePath(cfg.DataDir)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("record the stack's store: %w", err)
	}
	return func() { os.Remove(path) }, nil
}

// runningStack reads the state of the stack running on dataDir; ok is false when none
// runs (no file, or its process is gone: a stack that was killed leaves the file).
func runningStack(dataDir string) (st stackState, ok bool, err error) {
	b, err := os.ReadFile(stackStatePath(dataDir))
	if errors.Is(err, fs.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("read %s: %w", stackStatePath(dataDir), err)
	}
	// Signal 0 checks that the process exists (EPERM: it does, as another user).
	if err := syscall.Kill(st.PID, 0); st.PID <= 0 || err != nil && !errors.Is(err, syscall.EPERM) {
		return st, false, nil
	}
	return st, true, nil
}

// adoptRunningStack points cfg at the running stack's store unless the command chose
// one: storeChosen (BRIDGELINE_STORE or --store) keeps cfg.Store, and a set
// DYNAMODB_ENDPOINT keeps its endpoint. It says which store it adopted, or "".
func adoptRunningStack(cfg *config.Config, storeChosen bool) (string, error) {
	st, ok, err := runningStack(cfg.DataDir)
	if err != nil || !ok {
		return "", err
	}
	if !storeChosen {
		cfg.Store = st.Store
	}
	if cfg.Store != st.Store {
		return "", nil
	}
	if cfg.Store == "dynamodb" && cfg.DynamoDBEndpoint == "" {
		cfg.DynamoDBEndpoint = st.DynamoDBEndpoint
	}
	return fmt.Sprintf("the running stack's (pid %d) %s store %s", st.PID, st.Store, cfg.DynamoDBEndpoint), nil
}
