package dynamo_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bridgeline/bridgeline/shared/apierr"
	"github.com/bridgeline/bridgeline/shared/ident"
	"github.com/bridgeline/bridgeline/shared/store/dynamo"
	"github.com/bridgeline/bridgeline/shared/store/dynamo/dynamolocal"
	"github.com/bridgeline/bridgeline/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// newStore opens a Store on fresh tables (a unique prefix per test) in DynamoDB Local
// and deletes them when the test ends.
func newStore(t *testing.T) *dynamo.Store {
	t.Helper()
	endpoint := dynamolocal.Endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := strings.ToLower(ident.New("t")) + "-"
	s, err := dynamo.Open(ctx, dynamo.Config{Tables: dynamo.TablesWithPrefix(prefix), Endpoint: endpoint, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DeleteTables(ctx); err != nil {
			t.Errorf("DeleteTables: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return newStore(t) })
}

// TestEndpointFromEnvironment: with no Endpoint in the config, AWS_ENDPOINT_URL (what SAM
// CLI and LocalStack users set) decides where requests go.
func TestEndpointFromEnvironment(t *testing.T) {
	endpoint := dynamolocal.Endpoint(t)
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "local")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	ctx := context.Background()
	prefix := strings.ToLower(ident.New("t")) + "-"
	s, err := dynamo.Open(ctx, dynamo.Config{Tables: dynamo.Tables{dynamo.Accounts: prefix + "accounts"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables through AWS_ENDPOINT_URL: %v", err)
	}
	defer s.DeleteTables(ctx)
	if _, err := s.GetAccount(ctx, "acct_none"); !errors.Is(err, apierr.ErrNotFound) {
		t.Errorf("GetAccount = %v, want ErrNotFound", err)
	}
}

// TestUnconfiguredTable: a process given only some tables (a function's grants) gets a
// clear error naming the variable, before any request leaves.
func TestUnconfiguredTable(t *testing.T) {
	s := dynamo.New(nil, dynamo.Tables{dynamo.Accounts: "x-accounts"})
	_, err := s.GetAssistant(context.Background(), "asst_1")
	if err == nil || !strings.Contains(err.Error(), "TABLE_ASSISTANTS") {
		t.Errorf("GetAssistant without its table: err = %v, want one naming TABLE_ASSISTANTS", err)
	}
}

func TestLogicalIDs(t *testing.T) {
	tests := map[dynamo.Table]string{
		dynamo.Accounts:    "AccountsTable",
		dynamo.APIKeys:     "APIKeysTable",
		dynamo.LineHandles: "LineHandlesTable",
	}
	for table, want := range tests {
		if got := table.LogicalID(); got != want {
			t.Errorf("%s.LogicalID() = %q, want %q", table, got, want)
		}
	}
}

func TestWebhookConformance(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhookStore { return newStore(t) })
}
